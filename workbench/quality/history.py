"""A quality job's metric rows as the job service reads them: ``CHECKPOINT/quality/metrics.jsonl``.

The job appends every emitted row there (times as epoch milliseconds) besides its sinks, so
the service shows quality without reading a sink. A window emitted again (late records)
has several lines: :func:`latest` keeps the one of the highest ``emitted_batch``.

Retention: once the file passes :data:`MAX_BYTES` and has doubled since it was last
compacted, :func:`compact` rewrites it (atomically: readers see the old file or the new
one) with the last emission of each window that starts within the spec's
``history_retention`` of the newest window.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

FILE = "metrics.jsonl"
MAX_BYTES = 4 * 1024 * 1024  #: a file this large is compacted (if it doubled since)
_compacted: dict[Path, int] = {}  # a file's size after this process last compacted it


def path_of(checkpoint: str | Path) -> Path:
    return Path(checkpoint) / "quality" / FILE


def line(row: dict[str, Any]) -> str:
    """One metric row as a JSON line (datetimes as epoch milliseconds)."""
    plain = {k: int(v.timestamp() * 1000) if isinstance(v, datetime) else v for k, v in row.items()}
    return json.dumps(plain, separators=(",", ":"))


def append(
    checkpoint: str | Path, rows: Iterable[dict[str, Any]], keep_ms: int | None = None
) -> None:
    """Append ``rows``; with ``keep_ms``, compact the file when it has grown too large."""
    text = "".join(line(r) + "\n" for r in rows)
    if not text:
        return
    target = path_of(checkpoint)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as out:
        out.write(text)
    size = target.stat().st_size
    if keep_ms is not None and size > max(MAX_BYTES, 2 * _compacted.get(target, 0)):
        compact(checkpoint, keep_ms)


def compact(checkpoint: str | Path, keep_ms: int) -> None:
    """Rewrite the file with the last emission of each window starting within ``keep_ms``
    of the newest window."""
    target = path_of(checkpoint)
    rows = _lines(target)
    newest = max((r.get("window_timestamp", 0) for r in rows), default=0)
    kept = latest(r for r in rows if r.get("window_timestamp", 0) >= newest - keep_ms)
    fresh = target.with_name(f".{FILE}.tmp")
    fresh.write_text("".join(line(r) + "\n" for r in kept), encoding="utf-8")
    os.replace(fresh, target)
    _compacted[target] = target.stat().st_size


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
    rows = _lines(path_of(checkpoint))
    return latest(r for r in rows if r.get("window_timestamp", 0) >= since_ms)


def _lines(source: Path) -> list[dict[str, Any]]:
    if not source.is_file():
        return []
    rows = []
    for text in source.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(text))
        except json.JSONDecodeError:  # a line cut by a crash
            continue
    return rows
