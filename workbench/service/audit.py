"""The job service's audit trail: every request it denied (401, 403, and a job hidden as
404 from another team), one JSON object a line in ``STATE/audit.jsonl``.

Each entry says who (``user``, null when no valid token came; ``credential``: what was
presented, never its value), what (``method``, ``path`` with secrets scrubbed,
``status``, ``reason``: the refusal as the service logged it, which may name the team
that owns a hidden job, so the file is for admins: mode 0600) and when (``at``, UTC),
and from where (``ip``). Lines are appended (``O_APPEND``), so the servers sharing a
state folder (``workbench serve``, Jupyter's extension, the dashboard) write one trail.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

AUDIT_FILE = "audit.jsonl"
_lock = threading.Lock()


def audit_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / AUDIT_FILE


def record(state_dir: str | Path, **entry: Any) -> dict:
    """Append ``entry`` (with ``at``: now, UTC) to the state folder's trail."""
    line = {"at": datetime.now(UTC).isoformat(timespec="milliseconds"), **entry}
    path = audit_path(state_dir)
    data = (json.dumps(line, default=str) + "\n").encode("utf-8")
    with _lock:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return line


def entries(state_dir: str | Path) -> list[dict]:
    """The trail's entries, oldest first ([] before the first denial)."""
    try:
        text = audit_path(state_dir).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]
