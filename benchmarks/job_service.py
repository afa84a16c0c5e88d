"""The job service for the job benchmarks: ``workbench serve`` in its own process on a
temporary state folder (the tests' :mod:`servekit`: teams, tokens, admin ``root``), every
job stopped and the service ended on the way out, even on error."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "server")]

from servekit import TOKENS, Served, start_serve, write_state  # noqa: E402

ADMIN = "root"
ADMIN_TOKEN = TOKENS[ADMIN]


@contextlib.contextmanager
def serving(state: Path, settings: dict[str, Any] | None = None) -> Iterator[Served]:
    """A ``workbench serve`` over ``state`` (``settings`` added to its service.yaml); on
    exit its jobs are stopped, then it."""
    write_state(state)
    if settings:
        config = state / "service.yaml"
        config.write_text(yaml.safe_dump(yaml.safe_load(config.read_text()) | settings))
    served = start_serve(state)
    try:
        yield served
    finally:
        served.stop()


def call(served: Served, method: str, path: str, body: dict | None = None) -> Any:
    """The JSON answer of ``path`` (under ``/workbench/api/``) as the admin; raises on an
    error status, with the service's message."""
    answer = served.call(method, path, ADMIN, body)
    if answer.status_code >= 400:
        raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text}")
    return answer.json()


def epoch(stamp: str) -> float:
    """An ISO-8601 UTC time of the API (``...Z``) as epoch seconds."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
