"""The job service's database on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from workbench.jobs.db import Event, Job, Run, Version, add_event, migrate, open_database

pytestmark = pytest.mark.unit


def _job(name: str = "surge") -> Job:
    return Job(
        name=name,
        team="pricing",
        cluster="local",
        status="SUBMITTED",
        desired="running",
        current_version=1,
        checkpoint="/tmp/ckpt",
        created_by="bob",
    )


def test_migrations_make_the_four_tables_and_run_twice(database_url):
    db = open_database(database_url)
    migrate(db.engine)  # already at head: nothing to do
    tables = set(sa.inspect(db.engine).get_table_names())
    assert {"jobs", "versions", "runs", "events", "alembic_version"} <= tables
    with db.engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0005"
    db.dispose()


def test_a_database_of_the_first_schema_is_upgraded_with_its_rows(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = sa.create_engine(url)
    migrate(engine, "0001")  # as the first release left it: runs have no host
    assert "host" not in {c["name"] for c in sa.inspect(engine).get_columns("runs")}
    with engine.begin() as c:
        c.execute(sa.text(
            "INSERT INTO jobs (id, name, team, cluster, status, desired, current_version, "
            "checkpoint, failures, restart_token, created_by, created_at, updated_at) VALUES "
            "(1, 'old', 'pricing', 'local', 'RUNNING', 'running', 1, '/c', 0, 0, 'bob', "
            "'2026-11-01 00:00:00', '2026-11-01 00:00:00')"
        ))  # fmt: skip
        c.execute(sa.text(
            "INSERT INTO runs (job_id, run_id, version, attempt, run_dir, pid, started_at, "
            "log_path, restart_token) VALUES (1, '1-1', 1, 1, '/r', 7, '2026-11-01 00:00:00', "
            "'/r/log', 0)"
        ))  # fmt: skip
    engine.dispose()
    db = open_database(url)
    with db.session() as s:
        [run] = s.scalars(sa.select(Run))
        assert (run.run_id, run.pid, run.host) == ("1-1", 7, None)
        run.host = "/state/hosts/pricing-local-1"
    with db.session() as s:
        assert s.scalars(sa.select(Run)).one().host == "/state/hosts/pricing-local-1"
    db.dispose()


def test_rows_round_trip_with_utc_times(database_url):
    db = open_database(database_url)
    with db.session() as s:
        job = _job()
        s.add(job)
        s.flush()
        s.add(Version(job_id=job.id, number=1, spec_yaml="x", spec_hash="h", author="bob",
                      checkpoint="/c"))  # fmt: skip
        s.add(Run(job_id=job.id, run_id=f"{job.id}-1", version=1, attempt=1, run_dir="/r",
                  log_path="/r/log", pid=123))  # fmt: skip
        add_event(s, job.id, "bob", "submit", version=1)
    with db.session() as s:
        job = s.scalars(sa.select(Job)).one()
        assert job.created_at.tzinfo == UTC
        assert abs((datetime.now(UTC) - job.created_at).total_seconds()) < 60
        assert (job.failures, job.restart_token) == (0, 0)
        assert s.scalars(sa.select(Run)).one().pid == 123
        event = s.scalars(sa.select(Event)).one()
        assert (event.actor, event.action, event.detail_json) == ("bob", "submit", '{"version": 1}')
    db.dispose()


def test_job_names_and_version_numbers_are_unique(database_url):
    db = open_database(database_url)
    with db.session() as s:
        s.add(_job())
    with pytest.raises(IntegrityError), db.session() as s:
        s.add(_job())
    with db.session() as s:
        job_id = s.scalars(sa.select(Job.id)).one()
        s.add(Version(job_id=job_id, number=1, spec_yaml="x", spec_hash="h", author="b",
                      checkpoint="/c"))  # fmt: skip
    with pytest.raises(IntegrityError), db.session() as s:
        s.add(Version(job_id=job_id, number=1, spec_yaml="y", spec_hash="h", author="b",
                      checkpoint="/c"))  # fmt: skip
    db.dispose()


def test_sqlite_uses_wal_and_a_busy_timeout(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'sub' / 'w.db'}")
    with db.engine.connect() as c:
        assert c.execute(sa.text("PRAGMA journal_mode")).scalar() == "wal"
        assert c.execute(sa.text("PRAGMA busy_timeout")).scalar() >= 10_000
    db.dispose()


def test_services_starting_at_once_migrate_in_turn(database_url):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        databases = list(pool.map(open_database, [database_url] * 4))
    for db in databases:
        with db.session() as s:
            assert s.scalars(sa.select(Job)).all() == []
        db.dispose()


def _running_job_with_a_run(db) -> None:
    with db.session() as s:
        job = _job()
        job.status = "RUNNING"
        s.add(job)
        s.flush()
        s.add(Run(job_id=job.id, run_id=f"{job.id}-1", version=1, attempt=1, run_dir="/r",
                  log_path="/r/log", pid=123))  # fmt: skip


def _end_the_run(db) -> None:
    """What the supervisor commits when a run's process is gone and the job moves on."""
    with db.session() as s:
        s.scalars(sa.select(Run)).one().ended_at = datetime.now(UTC)
        s.scalars(sa.select(Job)).one().status = "STOPPING"


def _status_and_live_run(s, between=lambda: None) -> tuple[str, str | None]:
    """A job view's two reads: the status, then the live run (``between`` runs between)."""
    status = s.scalars(sa.select(Job.status)).one()
    between()
    return status, s.scalars(sa.select(Run.run_id).where(Run.ended_at.is_(None))).one_or_none()


def test_a_snapshot_is_not_torn_by_a_commit_between_its_queries(database_url):
    """A plain session can read RUNNING and then no run (the supervisor committed between
    the two reads); a snapshot reads both as of its first query."""
    db = open_database(database_url)
    _running_job_with_a_run(db)
    with db.session() as s:
        assert _status_and_live_run(s, lambda: _end_the_run(db)) == ("RUNNING", None)  # torn
    with db.session() as s:
        s.scalars(sa.select(Run)).one().ended_at = None
        s.scalars(sa.select(Job)).one().status = "RUNNING"
    with db.snapshot() as s:
        assert _status_and_live_run(s, lambda: _end_the_run(db)) == ("RUNNING", "1-1")
    with db.snapshot() as s:  # the next one sees the commit
        assert _status_and_live_run(s) == ("STOPPING", None)
    db.dispose()


def test_nothing_written_in_a_snapshot_lands_and_it_blocks_no_writer(database_url):
    db = open_database(database_url)
    _running_job_with_a_run(db)
    refused = False
    try:
        with db.snapshot() as s:
            s.execute(sa.update(Job).values(status="FAILED"))
    except sa.exc.DBAPIError as err:
        refused = "read-only" in str(err)
    assert refused == (db.engine.dialect.name == "postgresql")  # SQLite's is rolled back
    with db.snapshot() as s:
        assert s.scalars(sa.select(Job.status)).one() == "RUNNING"
        _end_the_run(db)  # a writer while a snapshot is open
    with db.snapshot() as s:
        assert _status_and_live_run(s) == ("STOPPING", None)
        run = s.scalars(sa.select(Run)).one()
    assert (run.run_id, run.log_path) == ("1-1", "/r/log")  # read, still readable after it
    db.dispose()
