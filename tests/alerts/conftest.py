"""Fixtures of the alerting tests: every database test runs on SQLite and PostgreSQL
(``database_url``, from ``tests/services_postgres.py``); the
job service runs with the stand-in job program (``tests/jobs/fixtures/fake_runner.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs"))  # jobkit

from alertkit import FAST, make_alert_service  # noqa: E402
from jobkit import shut  # noqa: E402


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'state' / 'workbench.db'}"


@pytest.fixture
def alert_service(tmp_path, database_url):
    """``alert_service(**config)``: a supervising JobService with quick alerting timings."""
    made = []

    def make(**extra):
        service = make_alert_service(tmp_path / "state", database_url, **{**FAST, **extra})
        made.append(service)
        return service

    yield make
    shut(made)
