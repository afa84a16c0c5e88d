"""Promotions run by a real ``jupyter server`` with the job service extension (the lab
extension's promote dialog): a notebook of the server's root promoted as its caller,
steps as they happen, the job at the end; the "new dagger" template route."""

from __future__ import annotations

import uuid

import nbformat
import pytest
from polling import wait_for
from servekit import TOKENS, write_state
from streaming import START
from test_extension import start_hub_like, stop_jupyter
from test_promote import USE_SURGE, code_notebook

from workbench.notebook.examples import demo_events

pytestmark = pytest.mark.unit

ALICE, BOB = TOKENS["alice"], TOKENS["bob"]


@pytest.fixture
def jupyter(workbench_kernel, tmp_path):
    """Jupyter with named users (alice: pricing, bob: supply) and the workbench kernel."""
    server = start_hub_like(tmp_path, write_state(tmp_path / "state"))
    yield server
    stop_jupyter(server)


def finished(jupyter, ref: str, token: str, timeout: float = 240) -> dict:
    def ended():
        answer = jupyter.call("GET", f"promotions/{ref}", token)
        assert answer.status_code == 200, answer.text
        return answer.json() if answer.json()["state"] != "running" else None

    return wait_for(ended, timeout, f"promotion {ref} to end")


def test_promotions_are_refused_before_they_run(jupyter, tmp_path):
    code_notebook(tmp_path / "nb.ipynb", "1")
    refused = jupyter.call("POST", "promotions", BOB, {"notebook": "nb.ipynb", "team": "pricing"})
    assert refused.status_code == 403, refused.text
    assert "may not promote a notebook for team 'pricing'" in refused.json()["error"]["message"]
    outside = jupyter.call(
        "POST", "promotions", ALICE, {"notebook": "../x.ipynb", "team": "pricing"}
    )
    assert outside.status_code == 400 and "not a notebook under the Jupyter root" in outside.text
    missing = jupyter.call(
        "POST", "promotions", ALICE, {"notebook": "gone.ipynb", "team": "pricing"}
    )
    assert missing.status_code == 400 and "save it" in missing.text
    body = {"notebook": "nb.ipynb", "team": "pricing", "schema_version": "latest"}
    bad = jupyter.call("POST", "promotions", ALICE, body)
    assert bad.status_code == 400 and "schema_version must be a version number" in bad.text
    body = {"notebook": "nb.ipynb", "team": "pricing", "parameters": "- a list"}
    assert jupyter.call("POST", "promotions", ALICE, body).status_code == 400
    unknown = jupyter.call("GET", "promotions/nope", ALICE)
    assert unknown.status_code == 404 and "promote the notebook again" in unknown.text
    assert jupyter.call("POST", "promotions", None, body).status_code == 403  # Jupyter's login


def test_a_failing_promotion_shows_its_steps_and_error_to_its_user(jupyter, tmp_path):
    code_notebook(
        tmp_path / "nopreview.ipynb", USE_SURGE, parameters="bootstrap = None\ntopic = 't'"
    )
    body = {"notebook": "nopreview.ipynb", "team": "pricing", "name": "np"}
    started = jupyter.call("POST", "promotions", ALICE, body)
    assert started.status_code == 202, started.text
    ref = started.json()["id"]
    assert started.json()["steps"][0]["name"] == "papermill"
    assert jupyter.call("GET", f"promotions/{ref}", BOB).status_code == 404  # not bob's
    done = finished(jupyter, ref, ALICE)
    assert done["state"] == "failed" and done["job"] is None and done["diff"] is None
    assert done["error"]["type"] == "PromoteError"
    assert "ran no preview" in done["error"]["message"]
    assert jupyter.call("GET", "jobs", TOKENS["root"]).json() == {"jobs": []}


def test_the_new_dagger_template_promotes_to_a_running_job(jupyter, kafka_broker, tmp_path):
    template = jupyter.call("GET", "templates/new-dagger?name=hotspots", ALICE)
    assert template.status_code == 200, template.text
    nb = nbformat.from_dict(template.json())
    assert nb.metadata.kernelspec.name == "dagger-workbench" and "'hotspots'" in nb.cells[1].source
    assert jupyter.call("GET", "templates/new-dagger?name=../x", ALICE).status_code == 400
    (tmp_path / "daggers").mkdir()
    nbformat.write(nb, tmp_path / "daggers" / "hotspots.ipynb")
    topic = f"lab-promote-{uuid.uuid4().hex[:8]}"
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=600, seed=13, start=START)
    streams = [{"table": "booking", "message": "esb.booking.BookingLogMessage",
                "topics": [topic], "starting_offsets": "earliest"}]  # fmt: skip
    body = {
        "notebook": "daggers/hotspots.ipynb", "team": "pricing", "name": "lab-hotspots",
        "parameters": f"streams: {streams}\nbootstrap_servers: {kafka_broker.bootstrap}",
    }  # fmt: skip
    started = jupyter.call("POST", "promotions", ALICE, body)
    assert started.status_code == 202, started.text
    done = finished(jupyter, started.json()["id"], ALICE)
    try:
        assert done["state"] == "done", done
        assert [s["name"] for s in done["steps"]] == [
            "papermill",
            "papermill",
            "parity",
            "submit",
            "job",
        ]
        assert done["job"]["name"] == "lab-hotspots" and done["job"]["team"] == "pricing"
        assert done["job"]["created_by"] == "alice"
        assert "on schema version bundled" in done["steps"][-1]["text"]  # none published
        wait_for(
            lambda: jupyter.call("GET", "jobs/lab-hotspots", ALICE).json()["status"] == "RUNNING",
            120,
            "lab-hotspots to run",
        )
        versions = jupyter.call("GET", "jobs/lab-hotspots/versions", ALICE).json()["versions"]
        assert versions[0]["parity"]["status"] == "passed"
    finally:
        jupyter.call("POST", "jobs/lab-hotspots/stop", ALICE)
        wait_for(
            lambda: (
                jupyter.call("GET", "jobs/lab-hotspots", ALICE).json()["status"]
                in ("STOPPED", "FAILED")
            ),
            60,
            "lab-hotspots to stop",
        )


def test_a_failed_parity_check_carries_its_differing_rows():
    from workbench.exceptions import ParityError
    from workbench.server.promotions import Promotion

    run = Promotion("p1", "alice", "nb.ipynb", "pricing")
    message = 'parity check failed: 1 row only in the preview:\n  {"noise": 0.1}'
    run.fail(ParityError(message, [{"noise": 0.1}], []))
    view = run.view()
    assert view["state"] == "failed" and view["diff"] == message
    assert view["error"] == {"type": "ParityError", "message": message}
