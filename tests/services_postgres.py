"""A PostgreSQL server for the session: Debian's binaries, a cluster in a temporary folder,
listening on a free 127.0.0.1 port with trust authentication; stopped at the end.

``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres`` user
(commands through ``runuser``). ``postgres_url()`` makes a fresh database per call.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from workbench.dev.ports import HOST, free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(
            "PostgreSQL is not installed: run scripts/system-deps.sh test (make test does)"
        )
    return found[-1]


class PostgresServer:
    def __init__(self, folder: Path, port: int):
        self.folder, self.port = folder, port
        self.data = folder / "data"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
            self.as_owner = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_owner, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> PostgresServer:
        self._run(
            _bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8"
        )
        options = f"-p {self.port} -c listen_addresses={HOST} -k {self.folder} -c fsync=off"
        self._run(
            _bin("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip
        return self

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@{HOST}:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; its SQLAlchemy URL."""
        import psycopg

        name = f"wb_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(f"host={HOST} port={self.port} user=postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server():
    folder = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    server = PostgresServer(folder, free_port()).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh database on the session's PostgreSQL server."""
    return postgres_server.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    """The test's job service database: a SQLite file, then a fresh PostgreSQL database
    (each test taking it runs on both)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state' / 'workbench.db'}"
    return request.getfixturevalue("postgres_url")
