"""Handoff: where a new version's NEW checkpoint starts, so it continues the old one.

An edit that changes the SQL cannot reuse the old checkpoint (its state has another
layout), so the new version gets a new checkpoint, started at Kafka offsets and with a
rowtime floor read from the old checkpoint's Spark logs (``<ckpt>/sinks/offsets/N``:
``v1``, ``{"batchWatermarkMs": ..}``, then one JSON line of END offsets per source;
``commits/N``: ``v1``, ``{"nextBatchWatermarkMs": ..}``; ``sources/<i>/0``: the offsets
the query first started from). :func:`plan` returns run.json's ``handoff`` value:
``{"starting_offsets": {table: {topic: {partition: offset}}}, "min_rowtime": ISO | None}``.

The rule, for a new SQL with a tumbling window of size ``G`` (a HOP's grain is its slide):

- ``K`` is the old query's last committed batch and ``W`` the watermark it ran with
  (``batchWatermarkMs`` of ``offsets/K``). In append mode Spark has emitted exactly the
  windows with ``end <= W``: those belong to the old version, whatever happens next.
- ``M = floor(W / G) * G`` is the start of the first window still open at ``W``. The new
  query drops every row with ``rowtime < M`` (``StreamingJob(min_rowtime=M)``), so it can
  write no window ending at or before ``W`` (such a window ends at a multiple of ``G``
  ``<= W``, hence ``<= M``, so all its rows are ``< M``): no window is written twice.
- It must read every record with ``t >= M``, so every window open at ``W`` is recomputed
  whole. Claim: if batch ``k``'s watermark satisfies ``wm_k + D < M`` (``D`` the old
  watermark delay), no record with ``t >= M`` was read before batch ``k``. Proof: Spark's
  watermark for batch ``k`` is ``max(wm_{k-1}, maxEventTime(batches < k) - D)``, so every
  record read before batch ``k`` has ``t <= maxEventTime(batches < k) <= wm_k + D < M``.
  The new checkpoint therefore starts at the start offsets of the LATEST such ``k``
  (``k = K + 1``, the end of the old query, uses ``nextBatchWatermarkMs`` of
  ``commits/K``); batch 0 (watermark 0) always qualifies, and its start offsets are
  ``sources/<i>/0``. Every record with ``t >= M`` is at or after those offsets: no open
  window loses a record. Records between ``start(k)`` and the old end with ``t < M`` are
  read again and dropped by the floor.
- The old query's own floor (a version that was itself a handoff) drops only rows below
  its ``M_old <= M``, so the claim holds for the rows that matter.

Without a window in the new SQL (stateless, or SESSION windows, which have no grid) the
new checkpoint starts at the old query's last committed END offsets and has no floor:
no record is read twice or skipped; a session open at the switch is split in two.

Limits, stated: with two input streams the watermark is the minimum over the streams, so
the claim bounds neither: the new checkpoint then starts where the old one first started
(``sources/<i>/0``), still exact. HOP windows open at ``W`` that started before ``M`` miss
their rows before ``M`` (never a window written twice). If the old watermark delay was
raised during the old checkpoint's life, give the largest (``old_delay_ms``). If Spark
has purged the batch ``k`` needed (it keeps the last 100), the first offsets are used. The
old version must have stopped (the supervisor stops it first): a batch it was killed in
may have written windows past ``W`` that the new version writes again (an InfluxDB
point is then overwritten with the new version's value; a Parquet row would be doubled).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import HandoffError
from workbench.streaming.checkpoints import QUERY

if TYPE_CHECKING:
    from workbench.spec import DaggerSpec, StreamSpec

Offsets = dict[str, dict[str, int]]  # topic -> partition -> offset


@dataclass(frozen=True)
class Batch:
    """One committed micro-batch of the old query."""

    id: int
    watermark_ms: int  # the watermark it ran with
    next_watermark_ms: int  # the watermark after it (commits/N)
    end: Offsets  # the offsets it read up to, all sources merged


def grain_ms(sql: str) -> int | None:
    """The grid of the SQL's group window (TUMBLE: size, HOP: slide); None without one (or
    with a SESSION window)."""
    from sqlglot import exp

    from workbench.sql.intervals import millis
    from workbench.sql.parse import parse

    for node in parse(sql).find_all(exp.Anonymous):
        kind = node.name.upper()
        if kind == "TUMBLE" and len(node.expressions) == 2:
            return millis(node.expressions[1])
        if kind == "HOP" and len(node.expressions) == 3:
            return millis(node.expressions[1])
    return None


def _lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [line.strip("\x00 \t\r") for line in text.splitlines()]


def _json_lines(path: Path) -> list[Any]:
    out = []
    for line in _lines(path):
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def _merge(dicts: list[Any]) -> Offsets:
    merged: Offsets = {}
    for value in dicts:
        if isinstance(value, dict):
            for topic, partitions in value.items():
                if isinstance(partitions, dict):
                    merged.setdefault(topic, {}).update(
                        {str(p): int(o) for p, o in partitions.items()}
                    )
    return merged


def _numbered(folder: Path) -> list[int]:
    return (
        sorted(int(p.name) for p in folder.glob("*") if p.name.isdigit()) if folder.is_dir() else []
    )


def committed(checkpoint: Path) -> list[Batch]:
    """The old query's committed batches still in its logs, oldest first."""
    query = checkpoint / QUERY
    done = set(_numbered(query / "commits"))
    batches = []
    for n in _numbered(query / "offsets"):
        if n not in done:
            continue
        meta, *sources = _json_lines(query / "offsets" / str(n))
        commit = _json_lines(query / "commits" / str(n))
        after = int(commit[0].get("nextBatchWatermarkMs", 0)) if commit else 0
        batches.append(Batch(n, int(meta.get("batchWatermarkMs", 0)), after, _merge(sources)))
    return batches


def first_offsets(checkpoint: Path) -> Offsets:
    """The offsets the old query first started from (``sources/<i>/0``)."""
    found = [_json_lines(p) for p in sorted((checkpoint / QUERY / "sources").glob("*/0"))]
    return _merge([v for values in found for v in values])


def start_offsets(batches: list[Batch], first: Offsets, floor_ms: int, delay_ms: int) -> Offsets:
    """Start offsets of the latest batch ``k`` with ``wm_k + delay < floor`` (module
    docstring); ``k`` past the last batch is its end; ``first`` when no kept batch fits."""
    for i in range(len(batches), 0, -1):
        previous = batches[i - 1]
        watermark = batches[i].watermark_ms if i < len(batches) else previous.next_watermark_ms
        contiguous = i == len(batches) or batches[i].id == previous.id + 1
        if contiguous and watermark + delay_ms < floor_ms:
            return previous.end
    return first


def plan(
    old_checkpoint: str | Path,
    spec_old: DaggerSpec,
    spec_new: DaggerSpec,
    old_delay_ms: int | None = None,
) -> dict[str, Any]:
    """run.json's ``handoff`` for a new checkpoint of ``spec_new`` continuing
    ``old_checkpoint`` (written by ``spec_old``)."""
    checkpoint = Path(old_checkpoint)
    batches = committed(checkpoint)
    if not batches:
        raise HandoffError(
            f"checkpoint {checkpoint} has no committed micro-batch: the old version never "
            "finished one, so start the new version from its streams' starting_offsets"
        )
    last = batches[-1]
    grain = grain_ms(spec_new.sql)
    if grain is None:
        return _handoff(spec_new, last.end, None)
    floor_ms = last.watermark_ms // grain * grain
    if floor_ms <= 0:  # the old version closed no window: everything is the new one's
        return _handoff(spec_new, first_offsets(checkpoint) or last.end, None)
    delay = spec_old.watermark_delay_ms if old_delay_ms is None else old_delay_ms
    if len(spec_old.streams) > 1:
        start = first_offsets(checkpoint)
    else:
        start = start_offsets(batches, first_offsets(checkpoint), floor_ms, delay)
    return _handoff(spec_new, start, floor_ms)


def _handoff(spec: DaggerSpec, offsets: Offsets, floor_ms: int | None) -> dict[str, Any]:
    per_table = {}
    for stream in spec.streams:
        topics = {t: p for t, p in offsets.items() if _reads(stream, t)}
        if topics:
            per_table[stream.table] = topics
    if not per_table:
        raise HandoffError(
            f"the old checkpoint read topics {sorted(offsets)}, none of which the new spec's "
            "streams read: a new checkpoint from the streams' starting_offsets is needed"
        )
    return {"starting_offsets": per_table, "min_rowtime": iso_ms(floor_ms)}


def _reads(stream: StreamSpec, topic: str) -> bool:
    if stream.topics:
        return topic in stream.topics
    return bool(stream.topic_pattern and re.fullmatch(stream.topic_pattern, topic))


def iso_ms(epoch_ms: int | None) -> str | None:
    if epoch_ms is None:
        return None
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_of_iso(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
