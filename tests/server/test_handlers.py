"""The handlers' error contract over real HTTP, for failures the real service does not
produce on purpose: an unexpected error is a 500 naming only a reference to the log."""

from __future__ import annotations

import asyncio
import threading

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


def test_unexpected_error_is_a_short_500(caplog):
    port = free_port()
    app = make_app(Broken(), TokenIdentity({"t": "alice"}))
    started = threading.Event()
    loop = asyncio.new_event_loop()

    async def serve():
        app.listen(port, "127.0.0.1")
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(serve()), loop.run_forever()))
    thread.start()
    try:
        started.wait(10)
        answer = requests.get(
            f"http://127.0.0.1:{port}/workbench/api/jobs",
            headers={"Authorization": "token t"},
            timeout=10,
        )
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["type"] == "InternalError" and "see its log" in error["message"]
    assert SECRET not in answer.text and "Traceback" not in answer.text
    ref = error["message"].split("(ref ")[1].split(")")[0]
    assert any(ref in r.getMessage() for r in caplog.records)  # the log has the detail
