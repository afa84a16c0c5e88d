"""The outbox on SQLite and PostgreSQL: rows of one group and receiver come due together,
a failed attempt backs off exponentially up to the cap, a delivered row is sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alertkit import rule
from jobkit import make_config

from workbench.alertmanager import outbox
from workbench.alerts.rules import AlertRule
from workbench.jobs.alert_tables import AlertRow, OutboxRow
from workbench.jobs.db import Job, now, open_database

pytestmark = pytest.mark.unit


@pytest.fixture
def db(database_url):
    db = open_database(database_url)
    yield db
    db.dispose()


def _job(s) -> Job:
    job = Job(name="surge", team="pricing", cluster="local", status="RUNNING", desired="running",
              current_version=1, checkpoint="/c", created_by="bob")  # fmt: skip
    s.add(job)
    s.flush()
    return job


def _alert(job: Job, hot: AlertRule, cell: str, status: str = "firing"):
    start = datetime(2026, 11, 24, 8, tzinfo=UTC)
    labels = {"service_area_id": cell}
    return outbox.make_alert(job, hot, f"fp{cell}", labels, status, start, None, {"amount": 400},
                             "http://wb/")  # fmt: skip


def test_rows_of_a_group_come_due_together_and_back_off(db, tmp_path):
    config = make_config(tmp_path, db.url, alerting={"retry_s": 2, "retry_max_s": 5})
    hot = AlertRule.model_validate(rule(group_wait="0s", notify=("a", "b")))
    with db.session() as s:
        job = _job(s)
        for cell in ("7", "8"):
            outbox.enqueue(s, job, hot, _alert(job, hot, cell), "http://wb/", hot.notify)
    with db.session() as s:
        groups = outbox.due_groups(s, now() + timedelta(seconds=1))
        assert groups == [("pricing", "a", job.id, "hot"), ("pricing", "b", job.id, "hot")]
        rows = outbox.group_rows(s, "a", job.id, "hot")
        assert {r.group_key for r in rows} == {f"{job.id}/hot"}  # firing and resolved alike
        assert [outbox.payload(r)["alerts"][0]["labels"]["service_area_id"] for r in rows] == [
            "7", "8"
        ]  # fmt: skip
        ids = [r.id for r in rows]
        delays = [outbox.mark_failed(s, ids, "down", config) for _ in range(3)]
        assert delays == [2, 4, 5]
        assert outbox.mark_failed(s, ids, "400", config, retryable=False) == 5
    with db.session() as s:
        assert outbox.due_groups(s, now() + timedelta(seconds=1)) == [groups[1]]
        outbox.mark_sent(s, ids)
    with db.session() as s:
        sent = [r for r in s.query(OutboxRow).order_by(OutboxRow.id) if r.receiver == "a"]
        assert {(r.status, r.attempts, r.last_error) for r in sent} == {("sent", 5, "400")}
        assert outbox.told(s, "a", job.id, "hot") == {"fp7": "firing", "fp8": "firing"}
        assert outbox.told(s, "b", job.id, "hot") == {}


def test_the_summary_is_rendered_and_the_link_is_the_health_page():
    hot = AlertRule.model_validate(rule(summary="cell {service_area_id}: {amount}"))
    job = Job(id=3, name="surge", team="pricing")
    alert = _alert(job, hot, "7")
    assert alert.annotations["summary"] == "cell 7: 400"
    assert alert.generator_url == "http://wb/workbench/jobs/3/health"
    down = AlertRule.model_validate(rule("down", health="offsets_behind_latest > 5",
                                         summary="{value} behind"))  # fmt: skip
    assert down.annotations("surge", {}, {"offsets_behind_latest": 9}) == {
        "summary": "9 behind", "description": ""
    }  # fmt: skip


def test_prune_keeps_pending_rows_and_those_of_firing_alerts(db):
    hot = AlertRule.model_validate(rule(group_wait="0s", notify=("a",)))
    start = datetime(2026, 11, 24, 8, tzinfo=UTC)
    with db.session() as s:
        job = _job(s)
        for cell, status in (("7", "firing"), ("8", "resolved"), ("9", "resolved")):
            s.add(AlertRow(fingerprint=f"fp{cell}", job_id=job.id, team="pricing", rule="hot",
                           status=status, starts_at=start))  # fmt: skip
            outbox.enqueue(s, job, hot, _alert(job, hot, cell), "http://wb/", hot.notify)
    with db.session() as s:
        rows = {r.fingerprint: r for r in s.query(OutboxRow)}
        outbox.mark_sent(s, [rows["fp7"].id, rows["fp8"].id])  # fp9's delivery still pending
    with db.session() as s:
        assert outbox.prune(s, 120, now() + timedelta(hours=119)) == 0  # within the retention
        assert outbox.prune(s, 120, now() + timedelta(hours=121)) == 1
    with db.session() as s:
        assert sorted(r.fingerprint for r in s.query(OutboxRow)) == ["fp7", "fp9"]
