"""The job service's database: jobs, their versions, runs and events (SQLAlchemy 2 ORM).

SQLite by default (``sqlite:///$STATE/workbench.db``, WAL journal, busy timeout), or
PostgreSQL through psycopg 3 (``postgresql+psycopg://user@host:port/db``). The schema is
made and upgraded by the Alembic migrations in ``workbench/jobs/migrations`` when
:func:`open_database` runs.
"""

from __future__ import annotations

import fcntl
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
    select,
    text,
)
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

LOG = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_MS = 30_000
MIGRATION_KEY = 0x5747_4A42  # pg_advisory_xact_lock key while migrating


def now() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator):
    """An aware UTC datetime, stored naive UTC (SQLite keeps no time zone)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None else None


class Base(DeclarativeBase):
    pass


class Job(Base):
    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    team: Mapped[str] = mapped_column(String(200), index=True)
    cluster: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    desired: Mapped[str] = mapped_column(String(20))
    current_version: Mapped[int] = mapped_column(Integer)
    checkpoint: Mapped[str] = mapped_column(Text)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now, onupdate=now)
    restart_token: Mapped[int] = mapped_column(Integer, default=0)


class Version(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("job_id", "number", name="uq_versions_job_number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    spec_yaml: Mapped[str] = mapped_column(Text)
    spec_hash: Mapped[str] = mapped_column(String(64))
    notebook_path: Mapped[str | None] = mapped_column(Text, nullable=True)
    notebook_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    parity_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    author: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
    checkpoint: Mapped[str] = mapped_column(Text)
    # the version whose checkpoint this one continues (new checkpoint + handoff), or None
    continues_from: Mapped[int | None] = mapped_column(Integer, nullable=True)
    handoff_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    #: the published schema version its runs decode with (:mod:`workbench.jobs.schema_pins`);
    #: None: the bundled schemas
    schema_version: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Run(Base):
    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    run_id: Mapped[str] = mapped_column(String(100), unique=True)  # the run folder's name
    version: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    run_dir: Mapped[str] = mapped_column(Text)
    pid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    exit_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_reason: Mapped[str | None] = mapped_column(String(40), nullable=True)
    log_path: Mapped[str] = mapped_column(Text)
    restart_token: Mapped[int] = mapped_column(Integer, default=0)
    stop_requested_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    term_sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    #: the folder of the shared Spark application hosting this run (``pid`` is then that
    #: application's process); None: the run is its own process (:mod:`workbench.jobs.hosting`)
    host: Mapped[str | None] = mapped_column(Text, nullable=True)


class Event(Base):
    __tablename__ = "events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    time: Mapped[datetime] = mapped_column(UtcDateTime, default=now)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(40))
    detail_json: Mapped[str] = mapped_column(Text, default="{}")


class Database:
    """An engine and its sessions; ``session()`` commits on success, rolls back on error."""

    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    @contextmanager
    def snapshot(self) -> Iterator[Session]:
        """A session for reading only, whose every query sees the database as its first one
        did: a view made of several queries (a job's status, then its live run) is never
        torn by a commit between them (the supervisor ending a run and setting the status).

        PostgreSQL: a ``REPEATABLE READ READ ONLY`` transaction. SQLite: an explicit
        ``BEGIN`` (pysqlite begins none before a SELECT, so each would read the newest
        commit); in WAL mode a read transaction keeps its snapshot and blocks no writer.
        Closed at the end, which rolls the transaction back; what was read stays readable
        (closing, unlike a rollback, expires nothing)."""
        with self._sessions() as session:
            if self.engine.dialect.name == "sqlite":
                session.connection().exec_driver_sql("BEGIN")
            else:
                options = {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
                session.connection(execution_options=options)
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


def add_event(session: Session, job_id: int, actor: str, action: str, **detail: Any) -> None:
    """Record that ``actor`` did ``action`` on the job (``detail``: JSON-able facts)."""
    session.add(Event(job_id=job_id, actor=actor, action=action, detail_json=json.dumps(detail)))


def each_job(db: Database, visit: Callable[[Session, Job], Any], what: str) -> list[int]:
    """``visit(session, job)`` for every job, each in a session of its own; one job's
    trouble never stops the others: it is logged (``what`` names the pass) and its id
    returned."""
    with db.session() as s:
        job_ids = list(s.scalars(select(Job.id).order_by(Job.id)))
    failed = []
    for job_id in job_ids:
        try:
            with db.session() as s:
                job = s.get(Job, job_id)
                if job is not None:
                    visit(s, job)
        except Exception:
            LOG.exception("%s: job %s", what, job_id)
            failed.append(job_id)
    return failed


def make_engine(url: str) -> Engine:
    kwargs: dict[str, Any] = {"future": True}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_MS / 1000, "check_same_thread": False}
    else:
        kwargs["pool_pre_ping"] = True
    engine = create_engine(url, **kwargs)
    if url.startswith("sqlite"):
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (the newest by default)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _migration_lock(engine), engine.begin() as connection:
        if connection.dialect.name == "postgresql":  # services starting at once take turns
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """A file lock beside a SQLite database while it is migrated (nothing for others)."""
    database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def open_database(url: str) -> Database:
    """The database at ``url``, migrated to the newest schema."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    db = Database(url)
    migrate(db.engine)
    return db
