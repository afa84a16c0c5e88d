"""Helpers for the job service's tests: specs, teams files, services on a database."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import yaml

from workbench.jobs.config import ServiceConfig
from workbench.service.job_service import JobService

FAKE_RUNNER = Path(__file__).resolve().parent / "fixtures" / "fake_runner.py"
FAKE_HOST = Path(__file__).resolve().parent / "fixtures" / "fake_host.py"
SQL = "SELECT * FROM booking"


def spec_yaml(name: str = "surge", sql: str = SQL, **extra) -> str:
    """A valid spec's YAML (``description`` tells the stand-in runner how to behave)."""
    data = {
        "name": name,
        "streams": [
            {
                "table": "booking",
                "message": "esb.booking.BookingLogMessage",
                "bootstrap_servers": "127.0.0.1:1",
                "topics": ["bookings"],
                "kafka_options": {"kafka.sasl.jaas.config": "${env:WB_TEST_JAAS}"},
            }
        ],
        "sql": sql,
        **extra,
    }
    return yaml.safe_dump(data, sort_keys=False)


def teams_file(folder: Path) -> Path:
    path = folder / "teams.yaml"
    path.write_text(
        yaml.safe_dump(
            {"admins": ["root"], "teams": {"pricing": ["bob", "carol"], "supply": ["dave"]}}
        )
    )
    return path


def make_config(
    state: Path, database_url: str, teams: Path | None = None, **extra
) -> ServiceConfig:
    extra.setdefault("runner_command", [sys.executable, str(FAKE_RUNNER)])
    extra.setdefault("host_command", [sys.executable, str(FAKE_HOST)])
    extra.setdefault("validate_command", [])  # no Spark in the service's unit tests
    # their specs read brokers that are not there (127.0.0.1:1): no probes, unless asked
    extra["policy"] = {"probe_timeout_s": 0, **(extra.get("policy") or {})}
    return ServiceConfig(state_dir=state, database_url=database_url, teams_file=teams, **extra)


def shut(services: list[JobService]) -> None:
    """Stop each service's supervisor, kill what its runs left and close it."""
    for service in services:
        service.stop_supervisor()
        kill_runs(service)
        service.close()


def kill_runs(service: JobService) -> None:
    """SIGKILL every process group a run of ``service`` may have left."""
    from sqlalchemy import select

    from workbench.jobs.db import Run

    with service.db.session() as s:
        pids = [r.pid for r in s.scalars(select(Run)) if r.pid]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def running(job: dict) -> bool:
    """A job view RUNNING with a run. (A view is read in one snapshot, so RUNNING has a run;
    the second check keeps a test's failure an assertion, not a TypeError.)"""
    return job["status"] == "RUNNING" and job["run"] is not None


def batches(job: dict) -> int:
    """The micro-batches a job view's metrics count, 0 before any."""
    return int((job.get("metrics") or {}).get("batches") or 0)


def running_run(service: JobService, who, name: str, other_than: dict | None = None, **where):
    """The job ``name``'s view once it is :func:`running` with a run other than
    ``other_than``'s and with the view's keys ``where``; waited for up to 30 s."""
    from polling import wait_for

    def ready() -> dict | None:
        job = service.get_job(who, name)
        if not running(job):
            return None
        if other_than is not None and job["run"]["id"] == other_than["run"]["id"]:
            return None
        return job if all(job[key] == value for key, value in where.items()) else None

    return wait_for(ready, 30, f"job {name} running{f' with {where}' if where else ''}")
