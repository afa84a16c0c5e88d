"""The handlers' error contract over real HTTP, for failures the real service does not
produce on purpose: an unexpected error is a 500 naming only a reference to the log."""

from __future__ import annotations

import asyncio
import logging
import threading
from contextlib import contextmanager

import pytest
import requests

from workbench.dev.ports import free_port
from workbench.jobs.authz import Principal
from workbench.server.app import make_app
from workbench.server.identity import TokenIdentity

pytestmark = pytest.mark.unit

SECRET = "s3cret-kafka-password"


class Broken:
    """A service whose every read fails with a message holding a secret."""

    def principal(self, user):
        return Principal(user, frozenset({"pricing"}))

    def list_jobs(self, who, team=None):
        raise RuntimeError(f"cannot connect: password={SECRET}")


@contextmanager
def serving(app):
    """``app`` on a free port of 127.0.0.1 in a thread; its base URL."""
    port = free_port()
    started = threading.Event()
    loop = asyncio.new_event_loop()

    async def serve():
        app.listen(port, "127.0.0.1")
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(serve()), loop.run_forever()))
    thread.start()
    try:
        started.wait(10)
        yield f"http://127.0.0.1:{port}/"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def test_unexpected_error_is_a_short_500(caplog):
    app = make_app(Broken(), TokenIdentity({"t": "alice"}))
    with serving(app) as url:
        answer = requests.get(
            f"{url}workbench/api/jobs", headers={"Authorization": "token t"}, timeout=10
        )
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["type"] == "InternalError" and "see its log" in error["message"]
    assert SECRET not in answer.text and "Traceback" not in answer.text
    ref = error["message"].split("(ref ")[1].split(")")[0]
    assert any(ref in r.getMessage() for r in caplog.records)  # the log has the detail


def test_a_500_logs_no_token(caplog):
    """The 500 of a request carrying tokens in its header and query string: its log lines
    (the access line included) hold none of them."""
    token, other = "tok-handlers-7d2e91", "tok-other-40c1b2"
    app = make_app(Broken(), TokenIdentity({token: "alice"}))
    with caplog.at_level(logging.DEBUG), serving(app) as url:
        answer = requests.get(
            f"{url}workbench/api/jobs?access_token={other}&password={other}&team=x",
            headers={"Authorization": f"token {token}"},
            timeout=10,
        )
    assert answer.status_code == 500
    server = [r for r in caplog.records if r.name.startswith(("tornado", "workbench"))]
    logged = "\n".join(logging.Formatter("%(message)s").format(r) for r in server)  # + traces
    assert "500 GET /workbench/api/jobs?access_token=[secret]&password=[secret]&team=x" in logged
    assert token not in logged and other not in logged
