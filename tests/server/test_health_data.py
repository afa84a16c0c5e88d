"""The health page's soft dependency on the alerting service's ``alerts`` table (its
columns as the issue 11 contract names them), and the page's HTML from made-up data."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import text

from workbench.jobs.db import Database
from workbench.server.health_data import Health, recent_alerts
from workbench.server.health_page import render
from workbench.server.sink_series import Output

pytestmark = pytest.mark.unit

ALERTS_TABLE = (
    "CREATE TABLE alerts (fingerprint VARCHAR(32) PRIMARY KEY, job_id INTEGER, team TEXT, "
    "rule TEXT, labels_json TEXT, status TEXT, starts_at DATETIME, ends_at DATETIME, "
    "last_value_json TEXT, updated_at DATETIME)"
)


@pytest.fixture
def db(tmp_path):
    """A database without the service's migrations (after the alerting service's, the
    ``alerts`` table would be there from the start)."""
    database = Database(f"sqlite:///{tmp_path / 'workbench.db'}")
    yield database
    database.dispose()


def test_no_alerts_table_is_none(db):
    assert recent_alerts(db, 1) is None


def test_alerts_newest_first(db):
    with db.session() as s:
        s.execute(text(ALERTS_TABLE))
        for n, (status, updated) in enumerate([("resolved", "10:00"), ("firing", "10:05")]):
            s.execute(
                text(
                    "INSERT INTO alerts VALUES (:fp, 1, 'pricing', 'hot-cell', :labels, :status, "
                    "'2026-11-24 09:58:00', NULL, :value, :updated)"
                ),
                {
                    "fp": f"f{n}",
                    "labels": json.dumps({"tag_s2id": f"cell-{n}"}),
                    "status": status,
                    "value": json.dumps({"bookings": 301 + n}),
                    "updated": f"2026-11-24 {updated}:00",
                },
            )
    found = recent_alerts(db, 1)
    assert [(a["status"], a["labels"], a["last_value"]) for a in found] == [
        ("firing", {"tag_s2id": "cell-1"}, {"bookings": 302}),
        ("resolved", {"tag_s2id": "cell-0"}, {"bookings": 301}),
    ]
    assert recent_alerts(db, 2) == []


def test_the_page_escapes_what_it_shows():
    now = time.time()
    job = {
        "id": 1, "name": "surge", "team": "pri<cing", "status": "FAILED", "version": 2,
        "desired": "running", "failures": 5, "run": None,
        "metrics": {"input_rate": None, "batches": 0},
        "last_error": "<script>alert(1)</script>",
    }  # fmt: skip
    alerts = [{"rule": "hot-cell", "status": "firing", "labels": {"c": "<b>"}, "last_value": {}}]
    problem = Output("influx v1 http://127.0.0.1:1 db/m", "SELECT ...", problem="refused <x>")
    page = render(Health(job, [], [("1-1", [])], alerts, [problem]), now)
    assert "<script>" not in page and "&lt;script&gt;" in page and "pri&lt;cing" in page
    assert "hot-cell" in page and "&lt;b&gt;" in page and "refused &lt;x&gt;" in page
    assert "no data yet" in page and "no status changes recorded" in page
    assert "schema version bundled" in page
    pinned = render(Health({**job, "schema_version": 3}, [], [], [], []), now)
    assert "version 2 · schema version 3 ·" in pinned
