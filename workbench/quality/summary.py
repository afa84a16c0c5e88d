"""What one micro-batch's facts hold, per (topic, partition, window), from one Spark job.

A micro-batch needs several small answers of its facts: how many records fall in windows
the watermark has closed (dropped), which windows it touches, the last offset read per
partition and the largest event time and window it keeps (the next state), and whether
offsets run on without a gap (then gaps need no job of their own). They all come
from one aggregation, collected once (a row per topic, partition and window), instead of
a Spark job each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.quality.state import QualityState, where

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class Group:
    topic: str
    partition: int
    window_start: int
    records: int
    first_offset: int
    last_offset: int
    max_event_ms: int | None


@dataclass(frozen=True)
class Summary:
    groups: list[Group]
    closed: Callable[[int], bool]  # whether a window (by its start) was closed before the batch

    @classmethod
    def of(cls, facts: DataFrame, closed: Callable[[int], bool]) -> Summary:
        from pyspark.sql import functions as F

        rows = (
            facts.groupBy("topic", "partition", "window_start")
            .agg(
                F.count("*").alias("n"),
                F.min("offset").alias("first"),
                F.max("offset").alias("last"),
                F.max("event_ms").alias("e"),
            )
            .collect()
        )
        groups = [
            Group(r.topic, r.partition, int(r.window_start), int(r.n), r["first"], r["last"], r.e)
            for r in rows
        ]
        return cls(groups, closed)

    @property
    def kept(self) -> list[Group]:
        return [g for g in self.groups if not self.closed(g.window_start)]

    @property
    def dropped(self) -> int:
        """Records of windows closed before the batch."""
        return sum(g.records for g in self.groups if self.closed(g.window_start))

    @property
    def touched(self) -> set[tuple[str, int]]:
        """The (topic, window start) of every record kept."""
        return {(g.topic, g.window_start) for g in self.kept}

    def contiguous(self, state: QualityState) -> bool:
        """Whether every partition's offsets run on without a gap, within the batch and from
        the last offset the state holds (then no gap needs looking for)."""
        spans: dict[str, tuple[int, int, int]] = {}
        for g in self.groups:
            key = where(g.topic, g.partition)
            first, last, n = spans.get(key, (g.first_offset, g.last_offset, 0))
            spans[key] = (min(first, g.first_offset), max(last, g.last_offset), n + g.records)
        for key, (first, last, n) in spans.items():
            previous = state.last_offsets.get(key)
            if last - first + 1 != n or (previous is not None and first != previous + 1):
                return False
        return True

    def next_state(self, state: QualityState, batch_id: int) -> QualityState:
        """``state`` after the batch: the last offset read of every partition (dropped
        records too), the largest event time kept, and the batch's latest window kept."""
        read: dict[str, int] = {}
        for g in self.groups:
            key = where(g.topic, g.partition)
            read[key] = max(g.last_offset, read.get(key, g.last_offset))
        last = {**state.last_offsets, **read}
        kept = self.kept
        events = [g.max_event_ms for g in kept if g.max_event_ms is not None]
        if state.max_event_ms is not None:
            events.append(state.max_event_ms)
        folders = dict(state.folders)
        if kept:
            folders[str(batch_id)] = max(g.window_start for g in kept)
        return QualityState(max(events) if events else None, last, folders)
