"""``workbench serve``'s log and audit trail as an operator reads them: tokens sent in query
strings, headers and paths, across routes and statuses, appear nowhere in the service's
log or trail; every denial (401, 403, another team's job hidden as 404) is in the trail
with who, what and when."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import requests
from healthkit import fake_serve, submit
from polling import wait_for
from servekit import TOKENS

from workbench.server.access_log import MaskTokens, scrub_uri
from workbench.service import audit

pytestmark = pytest.mark.unit

WRONG = "tok-wrong-5f1c9a"  # a token nobody has: not logged either


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A ``workbench serve`` (stand-in job program) with alice's job ``pricey``."""
    served = fake_serve(tmp_path_factory.mktemp("guarded"))
    submit(served, "alice", "pricey", "pricing")
    served.began = datetime.now(UTC)
    yield served
    assert served.stop() == 0


def _get(served, path: str, token: str | None = None, header: str | None = None, **kw):
    auth = {"Authorization": f"token {header}"} if header else {}
    params = {"token": token} if token else None
    url = f"{served.url.rstrip('/')}/{path}"
    return requests.request(kw.pop("method", "GET"), url, params=params, headers=auth,
                            timeout=30, **kw)  # fmt: skip


def _owner_token(served) -> str:
    return (served.state / "local-token").read_text().strip()


def _requests_with_tokens(served) -> dict[int, int]:
    """Tokens in query strings, headers and paths over routes and statuses; the count of
    answers of each status."""
    statuses: dict[int, int] = {}
    tokens = [*TOKENS.values(), _owner_token(served), WRONG]
    for token in tokens:
        answers = [
            _get(served, "workbench/api/me", token),  # a URL login: 302, then 200 (or 401)
            _get(served, "workbench/jobs/pricey/health", token),  # 200, 404, 403 or 401
            _get(served, "workbench/api/jobs", None, token),  # the header: 200/403/401
            _get(served, f"workbench/api/jobs?access_token={token}&password={token}"),  # 401
            _get(served, "workbench/api/jobs/pricey/stop", token, method="POST"),  # 401
            _get(served, "workbench/api/jobs/pricey/stop", None, token, method="POST"),
            _get(served, "workbench/api/nowhere", token),  # no route: 404
            _get(served, "workbench/api/jobs", None, token, method="DELETE"),  # 405
        ]
        if token != WRONG:  # a path of a token nobody has is a job name like any other
            answers.append(_get(served, f"workbench/api/jobs/{token}", None, token))  # 404
        for answer in answers:
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
    return statuses


@pytest.mark.e2e
def test_no_token_in_the_log_whatever_the_route_or_status(guarded):
    statuses = _requests_with_tokens(guarded)
    assert {200, 401, 403, 404, 405} <= set(statuses), statuses
    marker = _get(guarded, "workbench/api/last-request", WRONG)
    assert marker.status_code == 404
    log_file = guarded.state / "test-serve.log"
    wait_for(lambda: "last-request" in log_file.read_text(), 30, "the last request logged")
    log = log_file.read_text()
    for token in [*TOKENS.values(), _owner_token(guarded), WRONG]:
        assert token not in log, token
    # the failed requests are logged, their secrets scrubbed
    assert "401 GET /workbench/api/jobs?access_token=[secret]&password=[secret]" in log
    assert "403 GET /workbench/jobs/pricey/health" in log  # carla, once logged in
    assert "404 GET /workbench/api/nowhere?token=[secret]" in log
    assert "GET /workbench/api/jobs/[secret]" in log  # a token pasted into a path
    assert "405 DELETE /workbench/api/jobs (" in log


@pytest.mark.e2e
def test_every_denial_is_in_the_audit_trail(guarded):
    stop = _get(guarded, "workbench/api/jobs/pricey/stop", None, TOKENS["bob"], method="POST")
    read = _get(guarded, "workbench/api/jobs/pricey", None, TOKENS["bob"])
    assert (stop.status_code, stop.text) == (404, read.text)  # bob: as if there were no job
    viewer = _get(guarded, "workbench/api/jobs", None, TOKENS["carla"])
    assert viewer.status_code == 403
    nobody = _get(guarded, "workbench/api/jobs/pricey/restart?token=" + WRONG, method="POST")
    assert nobody.status_code == 401

    def trail() -> list[dict]:
        found = audit.entries(guarded.state)
        return found if any(e["path"].endswith("/restart?token=[secret]") for e in found) else []

    entries = wait_for(trail, 30, "the denials in the audit trail")
    stopped = [e for e in entries if e["path"] == "/workbench/api/jobs/pricey/stop"]
    assert stopped[-1]["user"] == "bob" and stopped[-1]["status"] == 404
    assert stopped[-1]["reason"] == "stop job 'pricey' of team 'pricing' by 'bob' (teams: supply)"
    carla = [e for e in entries if e["user"] == "carla" and e["path"] == "/workbench/api/jobs"][-1]
    assert carla["status"] == 403 and "dashboard viewer" in carla["reason"]
    assert carla["credential"] == "authorization header" and carla["method"] == "GET"
    unknown = entries[-1]
    assert unknown["status"] == 401 and unknown["user"] is None
    assert unknown["credential"] == "token in the URL" and unknown["ip"] == "127.0.0.1"
    when = datetime.fromisoformat(unknown["at"])
    assert guarded.began <= when <= datetime.now(UTC)
    assert all(e["status"] in (401, 403, 404) for e in entries)
    text = audit.audit_path(guarded.state).read_text()
    for token in [*TOKENS.values(), _owner_token(guarded), WRONG]:
        assert token not in text


@pytest.mark.parametrize(
    ("uri", "logged"),
    [
        ("/a?token=T&x=1", "/a?token=[secret]&x=1"),
        ("/a?access_token=T", "/a?access_token=[secret]"),
        ("/a?Password=T&hours=3", "/a?Password=[secret]&hours=3"),
        ("/a?client_secret=T&api%5Fkey=T", "/a?client_secret=[secret]&api%5Fkey=[secret]"),
        ("/a?token", "/a?token=[secret]"),
        ("/a?hours=3", "/a?hours=3"),
        ("/a", "/a"),
    ],
)
def test_scrub_uri(uri, logged):
    assert scrub_uri(uri) == logged


def test_mask_tokens_masks_messages_arguments_and_tracebacks():
    import logging

    masking = MaskTokens(["tok-1234", ""])
    try:
        raise ValueError("bad tok-1234")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, "f", 1, "at %s", ("/p/tok-1234",), None)
        record.exc_info = sys.exc_info()
    assert masking.filter(record)
    text = logging.Formatter().format(record)
    assert "tok-1234" not in text and "at /p/[secret]" in text and "bad [secret]" in text
