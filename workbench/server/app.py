"""``workbench serve``: the job service as a standalone tornado server.

The routes are :mod:`workbench.server.handlers` under ``/workbench/api/`` and the health
page and Prometheus endpoint (:mod:`workbench.server.pages`) under ``/workbench/``;
callers authenticate with ``Authorization: token T`` (or ``Bearer T``), T from the service
config's tokens, or the owner's token in ``$STATE/local-token`` (created 0600 on first
start; its holder is an admin). A browser logs in once: a token given on the login page
(``/workbench/login``) or as ``?token=T`` in a page's URL sets a signed cookie (key in
``$STATE/cookie-secret``) and the URL is reloaded without it; the cookie serves reads
only. The request log holds no secret (:mod:`workbench.server.access_log`); denials go to
the audit trail (:mod:`workbench.service.audit`). The server runs the JobService's
supervisor; SIGTERM or SIGINT stops the server and the supervisor, not the jobs (each is
its own process, and the next start re-attaches to them); SIGHUP reads service.yaml again
(its clusters, teams and tokens, :mod:`workbench.service.reload`). ``$STATE/service.json``
(``{url, pid, token_file}``) tells clients where it listens; it is removed on a clean stop.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import tornado.web

from workbench.client.embedded import SERVICE_FILE
from workbench.exceptions import WorkbenchError
from workbench.jobs.config import ServiceConfig
from workbench.server import login_page
from workbench.server.access_log import log_request, mask_tokens
from workbench.server.handlers import ApiHandler, NoRoute, rules
from workbench.server.identity import (
    COOKIE_SECRET_FILE,
    Identify,
    TokenIdentity,
    local_token,
    read_token,
    secret_file,
)
from workbench.server.pages import page_rules
from workbench.server.reload_routes import refresh_tokens
from workbench.service.reload import reload_config, summary


class StandaloneHandler(login_page.UrlLogin, ApiHandler):
    """Every request needs a caller: 401 before anything else. A ``?token=T`` in a read's
    URL logs the browser in (a cookie) and reloads the URL without it. The cookie serves
    reads only, so there is nothing for XSRF to forge."""

    def prepare(self) -> None:
        if not self.logged_in_by_url():
            self.caller()


def make_app(
    service: Any, identify: Identify, executor=None, cookie_secret: str | None = None
) -> tornado.web.Application:
    settings = {"service": service, "identify": identify, "executor": executor}
    handlers: list[Any] = rules("/", StandaloneHandler, settings)
    handlers += page_rules("/", StandaloneHandler, settings)
    handlers += login_page.rules("/", settings)
    return tornado.web.Application(
        handlers,
        default_handler_class=NoRoute,
        default_handler_args=settings,
        cookie_secret=cookie_secret or secrets.token_urlsafe(32),
        log_function=log_request,
        workbench_service=service,
        workbench_login="/" + login_page.PATH,
    )


def identity_for(config: Any, state_dir: Path) -> TokenIdentity:
    """Tokens from the config, plus the owner's local token."""
    return TokenIdentity(config.all_tokens(), owner_token=read_token(local_token(state_dir)))


def masked(identity: TokenIdentity) -> None:
    """No log line holds one of ``identity``'s tokens, wherever it was written."""
    mask_tokens([*identity.tokens, identity.owner_token or ""])


def serve(
    state_dir: Path | None = None,
    config_file: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    ready=None,
) -> int:
    """Run the service until SIGTERM/SIGINT. ``ready(url)`` is called once listening."""
    from workbench.service.job_service import JobService

    config = ServiceConfig.load(state_dir, config_file)
    state = Path(config.state_dir)
    service = JobService(config, config_file)
    return asyncio.run(_run(service, config, state, host, port, ready))


async def _run(service, config, state: Path, host: str, port: int, ready) -> int:
    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_sockets

    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="workbench-api")
    identity = identity_for(config, state)
    masked(identity)
    cookie_secret = read_token(secret_file(state / COOKIE_SECRET_FILE))
    app = make_app(service, identity, executor, cookie_secret)
    try:
        sockets = bind_sockets(port, host)
    except OSError as err:
        raise WorkbenchError(
            f"cannot listen on {host}:{port} ({err.strerror}): give another --port, "
            "or --port 0 for a free one"
        ) from None
    bound = sockets[0].getsockname()[1]
    server = HTTPServer(app, xheaders=True)
    server.add_sockets(sockets)
    url = f"http://{_url_host(host)}:{bound}/"
    supervising = service.start_supervisor()
    record = write_service_file(state, url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(
        signal.SIGHUP, lambda: loop.run_in_executor(executor, _reload, service, identity)
    )
    print(f"workbench job service on {url} (state {state}, pid {os.getpid()})", flush=True)
    if not supervising:
        print(
            "another process supervises this state's jobs: standing by (this one takes over "
            "when that one ends)",
            flush=True,
        )
    if ready:
        ready(url)
    try:
        await stop.wait()
    finally:
        server.stop()
        await loop.run_in_executor(executor, service.close)
        executor.shutdown(wait=False)
        _remove_service_file(record)
    print("workbench job service stopped (jobs keep running)", flush=True)
    return 0


def _reload(service: Any, identity: TokenIdentity) -> None:
    """SIGHUP: read service.yaml again; one line on stdout (the server's log) either way."""
    try:
        result = reload_config(service, service.config_file)
    except WorkbenchError as err:
        print(f"service.yaml not reloaded, the old config stays: {err}", flush=True)
        return
    refresh_tokens(identity, service)
    masked(identity)
    print(summary(result), flush=True)


def _url_host(host: str) -> str:
    if host in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def write_service_file(state: Path, url: str) -> Path:
    path = state / SERVICE_FILE
    data = {"url": url, "pid": os.getpid(), "token_file": str(local_token(state))}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _remove_service_file(path: Path) -> None:
    """Remove ``service.json`` if it is still this process's."""
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
