"""Helpers of the health page and metrics tests: a ``workbench serve`` whose jobs are the
stand-in job program (tests/jobs/fixtures/fake_runner.py: quick made-up micro-batches)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from polling import wait_for
from servekit import Served, headers, start_serve, write_state

FAKE_RUNNER = Path(__file__).resolve().parents[1] / "jobs" / "fixtures" / "fake_runner.py"
SPEC = {
    "streams": [
        {
            "table": "booking",
            "message": "esb.booking.BookingLogMessage",
            "bootstrap_servers": "127.0.0.1:1",
            "topics": ["bookings"],
        }
    ],
    "sql": "SELECT * FROM booking",
}


def fake_state(folder: Path) -> Path:
    """A state folder (teams, tokens: :func:`servekit.write_state`) whose jobs run the
    stand-in job program, a micro-batch every 0.2 s."""
    state = write_state(folder)
    config = yaml.safe_load((state / "service.yaml").read_text())
    config |= {"runner_command": [sys.executable, str(FAKE_RUNNER)], "heartbeat_s": 0.2}
    (state / "service.yaml").write_text(yaml.safe_dump(config))
    return state


def fake_serve(folder: Path) -> Served:
    """``workbench serve`` over :func:`fake_state`."""
    return start_serve(fake_state(folder))


def submit(served: Served, user: str, name: str, team: str, description: str = "") -> dict:
    spec = yaml.safe_dump({"name": name, **SPEC, "description": description})
    answer = served.call("POST", "jobs", user, {"name": name, "team": team, "spec_yaml": spec})
    assert answer.status_code == 201, answer.text
    return answer.json()


def wait_batches(served: Served, name: str, count: int) -> dict:
    """The job once it is RUNNING and its live run has reported ``count`` micro-batches."""

    def enough() -> dict | None:
        job = served.call("GET", f"jobs/{name}", "root").json()
        ran = (job["metrics"].get("batches") or 0) >= count
        return job if ran and job["status"] == "RUNNING" else None

    return wait_for(enough, 60, f"{name} to run {count} micro-batches")


def page_url(served: Served, ref: object, tail: str = "health") -> str:
    return f"{served.url.rstrip('/')}/workbench/jobs/{ref}/{tail}"


__all__ = ["fake_serve", "fake_state", "headers", "page_url", "submit", "wait_batches"]
