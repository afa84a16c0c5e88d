"""A quality job's metric rows as the job service reads them: ``CHECKPOINT/quality/metrics.jsonl``.

The job appends every emitted row there (times as epoch milliseconds) besides its sinks, so
the service shows quality without reading a sink. A window emitted again (late records)
has several lines: :func:`latest` keeps the one of the highest ``emitted_batch``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

FILE = "metrics.jsonl"


def path_of(checkpoint: str | Path) -> Path:
    return Path(checkpoint) / "quality" / FILE


def line(row: dict[str, Any]) -> str:
    """One metric row as a JSON line (datetimes as epoch milliseconds)."""
    plain = {k: int(v.timestamp() * 1000) if isinstance(v, datetime) else v for k, v in row.items()}
    return json.dumps(plain, separators=(",", ":"))


def append(checkpoint: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    text = "".join(line(r) + "\n" for r in rows)
    if text:
        target = path_of(checkpoint)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as out:
            out.write(text)


def latest(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last emission per (topic, window), by topic then window."""
    kept: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        key = (row["tag_topic"], row["window_timestamp"])
        if key not in kept or row["emitted_batch"] >= kept[key]["emitted_batch"]:
            kept[key] = row
    return [kept[k] for k in sorted(kept)]


def read(checkpoint: str | Path, since_ms: int = 0) -> list[dict[str, Any]]:
    """The latest rows of a quality job's windows starting at ``since_ms`` or later."""
    source = path_of(checkpoint)
    if not source.is_file():
        return []
    rows = []
    for text in source.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(text)
        except json.JSONDecodeError:  # a line cut by a crash
            continue
        if row.get("window_timestamp", 0) >= since_ms:
            rows.append(row)
    return latest(rows)
