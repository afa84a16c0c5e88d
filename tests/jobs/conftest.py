"""Fixtures of the job service's tests: every database test runs on SQLite and PostgreSQL
(``database_url``, from ``tests/services_postgres.py``)."""

from __future__ import annotations

import pytest
from jobkit import make_config, shut

from workbench.service.job_service import JobService


@pytest.fixture
def make_service(tmp_path, database_url):
    """``make_service(teams=None, **config)``: a JobService on the test's database."""
    made: list[JobService] = []

    def make(teams=None, **extra) -> JobService:
        service = JobService(make_config(tmp_path / "state", database_url, teams, **extra))
        made.append(service)
        return service

    yield make
    shut(made)
