"""The job views: a listing costs a constant number of queries, whatever the number of jobs,
and says the same as each job's own view."""

from __future__ import annotations

import json

import pytest
from jobkit import spec_yaml, teams_file
from sqlalchemy import event, select

from workbench.jobs.alert_tables import AlertRow
from workbench.jobs.db import Event, Job, Run, now
from workbench.jobs.views import ERROR_ACTIONS

pytestmark = pytest.mark.unit


@pytest.fixture
def service(make_service, tmp_path):
    return make_service(teams=teams_file(tmp_path))


def seed(service, tmp_path, numbers: range) -> None:
    """Jobs ``job{i}`` for i in ``numbers``, each with an ended and a live run (its
    heartbeat written), events with two errors, and alerts of which the odd jobs' fire."""
    with service.db.session() as s:
        for i in numbers:
            job = Job(
                name=f"job{i}", team="pricing", cluster="local", status="RUNNING",
                desired="running", current_version=1, checkpoint="", created_by="bob",
            )  # fmt: skip
            s.add(job)
            s.flush()
            for attempt, ended in ((1, now()), (2, None)):
                folder = tmp_path / "runs" / f"{i}-{attempt}"
                folder.mkdir(parents=True)
                (folder / "heartbeat.json").write_text(json.dumps({"metrics": {"records": i}}))
                s.add(
                    Run(
                        job_id=job.id, run_id=f"{i}-{attempt}", version=1, attempt=attempt,
                        run_dir=str(folder), pid=None, ended_at=ended, log_path="",
                    )
                )  # fmt: skip
            for n, action in enumerate(("submit", ERROR_ACTIONS[0], ERROR_ACTIONS[-1], "start")):
                detail = json.dumps({"error": f"error {n} of {i}"})
                s.add(Event(job_id=job.id, actor="bob", action=action, detail_json=detail))
            for rule in ("lag", "rate"):
                s.add(
                    AlertRow(
                        fingerprint=f"{rule}{i}", job_id=job.id, team="pricing", rule=rule,
                        status="firing" if i % 2 else "resolved", starts_at=now(),
                    )
                )  # fmt: skip


def statements(service, call) -> tuple[int, object]:
    """How many SQL queries ``call()`` sends (a snapshot's ``BEGIN`` is not one), and what
    it returns."""
    sent: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        if statement != "BEGIN":
            sent.append(statement)

    event.listen(service.db.engine, "before_cursor_execute", count)
    try:
        result = call()
    finally:
        event.remove(service.db.engine, "before_cursor_execute", count)
    return len(sent), result


def test_listing_50_jobs_costs_as_many_queries_as_listing_one(service, tmp_path):
    seed(service, tmp_path, range(1))
    bob = service.principal("bob")
    one, _ = statements(service, lambda: service.list_jobs(bob))
    seed(service, tmp_path, range(1, 50))
    fifty, jobs = statements(service, lambda: service.list_jobs(bob))
    assert len(jobs) == 50
    assert fifty == one <= 5, f"{fifty} statements for 50 jobs, {one} for one"


def test_the_listing_says_what_each_job_view_says(service, tmp_path):
    seed(service, tmp_path, range(6))
    bob = service.principal("bob")
    jobs = service.list_jobs(bob)
    assert jobs == [service.get_job(bob, job["id"]) for job in jobs]
    for i, job in enumerate(jobs):
        assert job["run"]["id"] == f"{i}-2" and job["run"]["attempt"] == 2
        assert job["metrics"]["records"] == i
        assert job["last_error"] == f"error 2 of {i}"
        assert job["alerts_firing"] == (2 if i % 2 else 0)


def test_a_job_without_runs_errors_or_alerts(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    [job] = service.list_jobs(bob)
    assert (job["run"], job["last_error"], job["alerts_firing"]) == (None, None, 0)
    assert set(job["metrics"].values()) == {None}


@pytest.mark.parametrize("read", ["get_job", "list_jobs"])
def test_a_view_is_never_torn_by_the_supervisor_committing_meanwhile(service, tmp_path, read):
    """The supervisor ends the live run and sets STOPPING just after the view has read the
    job: the view is the state before that commit (a snapshot), never RUNNING with no run."""
    seed(service, tmp_path, range(1))
    bob = service.principal("bob")
    view = {
        "get_job": lambda: service.get_job(bob, "job0"),
        "list_jobs": lambda: service.list_jobs(bob)[0],
    }[read]
    committed: list[str] = []

    def end_the_run_once(_conn, _cursor, statement, *_args) -> None:
        if not committed and "FROM jobs" in statement:
            committed.append(statement)
            with service.db.session() as s:
                s.scalars(select(Run).where(Run.ended_at.is_(None))).one().ended_at = now()
                s.scalars(select(Job)).one().status = "STOPPING"

    event.listen(service.db.engine, "after_cursor_execute", end_the_run_once)
    try:
        job = view()
    finally:
        event.remove(service.db.engine, "after_cursor_execute", end_the_run_once)
    assert committed, "the job was never read"
    assert (job["status"], job["run"]["id"]) == ("RUNNING", "0-2")
    job = view()
    assert (job["status"], job["run"]) == ("STOPPING", None)
