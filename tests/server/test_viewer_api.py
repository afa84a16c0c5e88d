"""A dashboard viewer (teams file ``viewers:``, carla: Bandung) gets 403 from every part
of the job service, in ``workbench serve`` and in the Jupyter server extension, with a
message saying they are a dashboard viewer."""

from __future__ import annotations

import pytest
import requests
from servekit import TOKENS, headers, write_state
from test_extension import start_hub_like, stop_jupyter

pytestmark = pytest.mark.unit

#: (method, path under workbench/api/ or workbench/) a viewer tries
API = [
    ("GET", "api/jobs"),
    ("POST", "api/jobs"),
    ("GET", "api/jobs/alice-surge"),
    ("POST", "api/jobs/alice-surge/stop"),
    ("GET", "api/jobs/alice-surge/logs"),
    ("GET", "api/alerts"),
    ("GET", "api/silences"),
    ("GET", "api/me"),
    ("GET", "jobs/alice-surge/health"),
    ("GET", "metrics"),
]


def refused(answer: requests.Response) -> None:
    assert answer.status_code == 403, answer.text[:300]
    assert "carla" in answer.text and "is a dashboard viewer (areas: bandung)" in answer.text


def test_serve_refuses_a_viewer_everything(served):
    for method, path in API:
        answer = requests.request(
            method,
            f"{served.url.rstrip('/')}/workbench/{path}",
            headers=headers("carla"),
            json={},
            timeout=30,
        )
        refused(answer)
    assert served.call("GET", "me", "alice").json()["user"] == "alice"  # others unchanged


@pytest.mark.lab
def test_the_jupyter_extension_refuses_a_viewer_everything(tmp_path):
    jupyter = start_hub_like(tmp_path, write_state(tmp_path / "state"))
    try:
        auth = {"Authorization": f"token {TOKENS['carla']}"}
        for method, path in [
            *API,
            ("GET", "api/promotions/x"),
            ("GET", "api/templates/new-dagger"),
        ]:
            answer = requests.request(
                method, jupyter.url + "workbench/" + path, headers=auth, json={}, timeout=30
            )
            refused(answer)
        assert jupyter.call("GET", "me", TOKENS["bob"]).json()["teams"] == ["supply"]
    finally:
        stop_jupyter(jupyter)
