"""Real receivers for notifiers, started by the tests on 127.0.0.1: an HTTP recorder (stands
in for Slack, PagerDuty and webhooks) and an SMTP server (aiosmtpd).

Both are session-scoped pytest fixtures registered in ``tests/conftest.py``'s
``pytest_plugins``, so any test can request ``http_receiver`` or ``smtp_receiver``::

    def test_x(http_receiver):
        hook = http_receiver.endpoint("pricing")          # a fresh path of its own
        ... {"type": "webhook", "url": hook.url} ...
        (request,) = hook.wait_for(1)                      # what it accepted
        assert request.json["status"] == "firing"

        hook.fail(500, seconds=30)    # answer 500 for 30 s (or times=N requests)
        hook.recover()                # answer as before again, now
        http_receiver.down(60)        # refuse connections for 60 s, then listen again
                                      # on the same port (or at once: http_receiver.up())

Each test takes its own :meth:`HttpReceiver.endpoint` (the server is shared by the
session); :meth:`Endpoint.delivered` lists the requests it accepted (2xx),
:meth:`Endpoint.attempts` all of them, refused ones too. ``smtp_receiver`` records every
message (:meth:`SmtpReceiver.wait_for` by recipient); it offers STARTTLS with a
self-signed certificate (``cert_file``; point ``SSL_CERT_FILE`` at it to trust it) and
AUTH LOGIN/PLAIN for the users in ``users``.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from workbench.dev.ports import HOST, free_port

WAIT_S = 10.0


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it, and the status it answered with."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    at: float = field(default_factory=time.time)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class _Rule:
    """How an endpoint answers: ``status``/``body``, or ``fail_status`` while failing."""

    status: int = 200
    body: str = "ok"
    fail_status: int = 500
    fail_times: int = 0
    fail_until: float = 0.0
    delay_s: float = 0.0

    def answer(self) -> tuple[int, str]:
        if self.fail_times > 0:
            self.fail_times -= 1
            return self.fail_status, "receiver failure (test)"
        if time.monotonic() < self.fail_until:
            return self.fail_status, "receiver failure (test)"
        return self.status, self.body


class Endpoint:
    """One path of the receiver, owned by one test."""

    def __init__(self, receiver: HttpReceiver, path: str):
        self.receiver, self.path = receiver, path

    @property
    def url(self) -> str:
        return self.receiver.url(self.path)

    def reply(self, status: int = 200, body: Any = "ok") -> Endpoint:
        """Answer every request with ``status`` and ``body`` (a dict is sent as JSON)."""
        rule = self.receiver.rule(self.path)
        rule.status, rule.body = status, body if isinstance(body, str) else json.dumps(body)
        return self

    def fail(self, status: int = 500, times: int = 0, seconds: float = 0.0) -> Endpoint:
        """Answer ``status`` to the next ``times`` requests, or for ``seconds``."""
        rule = self.receiver.rule(self.path)
        rule.fail_status, rule.fail_times = status, times
        rule.fail_until = time.monotonic() + seconds if seconds else 0.0
        return self

    def recover(self) -> Endpoint:
        """Stop failing (after :meth:`fail`): answer as :meth:`reply` says again."""
        rule = self.receiver.rule(self.path)
        rule.fail_times, rule.fail_until = 0, 0.0
        return self

    def delay(self, seconds: float) -> Endpoint:
        """Answer each request only after ``seconds`` (a slow receiver)."""
        self.receiver.rule(self.path).delay_s = seconds
        return self

    def attempts(self) -> list[Received]:
        return [r for r in self.receiver.requests() if r.path == self.path]

    def delivered(self) -> list[Received]:
        return [r for r in self.attempts() if 200 <= r.status < 300]

    def wait_for(self, n: int, timeout: float = WAIT_S) -> list[Received]:
        """The first ``n`` delivered requests, waiting up to ``timeout`` for them."""
        deadline = time.monotonic() + timeout
        while len(found := self.delivered()) < n:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.url}: {len(found)} of {n} requests after {timeout}s "
                    f"({len(self.attempts())} attempts)"
                )
            time.sleep(0.02)
        return found[:n]


class HttpReceiver:
    """A recording HTTP server on 127.0.0.1 that can fail, go down and come back."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self._lock = threading.Lock()
        self._requests: list[Received] = []
        self._rules: dict[str, _Rule] = {}
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self._names = count(1)

    def url(self, path: str = "/") -> str:
        return f"http://{HOST}:{self.port}{path}"

    def endpoint(self, name: str = "hook") -> Endpoint:
        return Endpoint(self, f"/{name}-{next(self._names)}")

    def rule(self, path: str) -> _Rule:
        with self._lock:
            return self._rules.setdefault(path, _Rule())

    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    def record(self, handler: BaseHTTPRequestHandler) -> tuple[int, str]:
        size = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(size) if size else b""
        path = handler.path.split("?")[0]
        time.sleep(self.rule(path).delay_s)
        with self._lock:
            status, text = self._rules.setdefault(path, _Rule()).answer()
            headers = {k.lower(): v for k, v in handler.headers.items()}
            self._requests.append(Received(handler.command, path, headers, body, status))
        return status, text

    def start(self) -> None:
        self._server = _Server((HOST, self.port), _handler(self))
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def down(self, seconds: float) -> None:
        """Refuse connections now, listen again on the same port after ``seconds``."""
        self.stop()
        self._timer = threading.Timer(seconds, self.up)
        self._timer.daemon = True
        self._timer.start()

    def up(self) -> None:
        """Listen again now (if down)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._server is None:
            self.start()

    @property
    def is_up(self) -> bool:
        return self._server is not None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a timeout test) is no error of the receiver


def _handler(receiver: HttpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            status, text = receiver.record(self)
            data = text.encode()
            self.send_response(status)
            kind = "application/json" if text.startswith("{") else "text/plain"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_PUT = do_GET = _answer  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


@dataclass(frozen=True)
class Mail:
    """One message the SMTP server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    login: str | None  # the user that authenticated, if any
    tls: bool  # whether the session was upgraded with STARTTLS


class SmtpReceiver:
    """aiosmtpd on 127.0.0.1, recording every message; STARTTLS and AUTH offered."""

    def __init__(self, cert_dir: Path):
        self.port = free_port()
        self.users: dict[str, str] = {}
        self.cert_file = cert_dir / "smtp-cert.pem"
        self._key_file = cert_dir / "smtp-key.pem"
        self._mails: list[Mail] = []
        self._lock = threading.Lock()
        self._controller: Any = None

    def start(self) -> None:
        import ssl

        from aiosmtpd.controller import Controller

        _self_signed(self.cert_file, self._key_file)
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(self.cert_file, self._key_file)
        self._controller = Controller(
            _SmtpHandler(self),
            hostname=HOST,
            port=self.port,
            tls_context=tls,
            authenticator=self._authenticate,
            auth_require_tls=False,
        )
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> Any:
        from aiosmtpd.smtp import AuthResult, LoginPassword

        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        user, password = auth_data.login.decode(), auth_data.password.decode()
        if self.users.get(user) != password:
            return AuthResult(success=False, handled=False)  # answers 535
        return AuthResult(success=True, auth_data=user)

    def add(self, mail: Mail) -> None:
        with self._lock:
            self._mails.append(mail)

    def mails(self, to: str | None = None) -> list[Mail]:
        with self._lock:
            return [m for m in self._mails if to is None or to in m.rcpt_tos]

    def wait_for(self, n: int, to: str, timeout: float = WAIT_S) -> list[Mail]:
        deadline = time.monotonic() + timeout
        while len(found := self.mails(to)) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(found)} of {n} mails to {to} after {timeout}s")
            time.sleep(0.02)
        return found[:n]


class _SmtpHandler:
    def __init__(self, receiver: SmtpReceiver):
        self.receiver = receiver

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802
        message = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        login = session.auth_data if session.authenticated else None
        tls = session.ssl is not None
        mail = Mail(envelope.mail_from, list(envelope.rcpt_tos), message, login, tls)
        self.receiver.add(mail)
        return "250 Message accepted for delivery"


def _self_signed(cert: Path, key: Path) -> None:
    """A certificate for 127.0.0.1 (its own CA) made with the openssl command."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"]
        + ["-addext", "basicConstraints=critical,CA:TRUE"],
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="session")
def http_receiver():
    receiver = HttpReceiver()
    receiver.start()
    yield receiver
    receiver.up()  # cancels a pending comeback
    receiver.stop()


@pytest.fixture(scope="session")
def smtp_receiver(tmp_path_factory):
    receiver = SmtpReceiver(tmp_path_factory.mktemp("smtp"))
    receiver.start()
    yield receiver
    receiver.stop()
