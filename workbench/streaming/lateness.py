"""Late records: the sample records a streaming job would drop as late.

The job's watermark is the maximum event time it has seen minus the watermark delay
(one global watermark over every partition, as Spark computes it). A stateful aggregation
drops a record when every window it belongs to has closed, i.e. when the end of its
last window is at or before the watermark (Spark's ``window.end <= watermark``).

For a sample (a batch) the records are taken in arrival order (their Kafka timestamps),
and a record is **late** when

    last_window_end(event_time) <= max(event time of the records that arrived before it) - delay

Records with the same Kafka timestamp count as arriving together: a producer stamps a
whole batch alike, and nothing orders one partition's records against another's then.

where the last window is the one of the query's group window (:func:`closing_of`):
``TUMBLE(size)``: the window holding the record; ``HOP(slide, size)``: the latest
window holding it (start ``floor(t / slide) * slide``, ``+ size``); ``SESSION(gap)``:
``t + gap``; no group window: the event time itself (what a watermark filter drops).
Spark moves the watermark only between micro-batches, so a job drops at most this many.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.rowtime import rowtime_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


@dataclass(frozen=True)
class Closing:
    """When a record's last window closes: ``kind`` is TUMBLE, HOP, SESSION or NONE."""

    kind: str = "NONE"
    slide_ms: int = 0
    size_ms: int = 0

    def last_end(self, micros: Column) -> Column:
        """The end of the last window holding an event at ``micros`` (microseconds)."""
        from pyspark.sql import functions as F

        slide, size = self.slide_ms * 1000, self.size_ms * 1000
        if self.kind in ("TUMBLE", "HOP"):
            return F.floor(micros / F.lit(slide)) * F.lit(slide) + F.lit(size)
        if self.kind == "SESSION":
            return micros + F.lit(size)
        return micros


def closing_of(sql: str) -> Closing:
    """The group window of ``sql`` (dagger SQL): the first ``GROUP BY TUMBLE/HOP/SESSION``."""
    from sqlglot import exp

    from workbench.sql import intervals
    from workbench.sql.parse import parse

    for group in parse(sql).find_all(exp.Group):
        for call in group.expressions:
            name = call.name.upper() if isinstance(call, exp.Anonymous) else ""
            ms = [intervals.millis(a) or 0 for a in call.expressions[1:]] if name else []
            if name == "TUMBLE" and len(ms) == 1:
                return Closing(name, ms[0], ms[0])
            if name == "HOP" and len(ms) == 2:
                return Closing(name, ms[0], ms[1])
            if name == "SESSION" and len(ms) == 1:
                return Closing(name, 0, ms[0])
    return Closing()


def count_late(rows: DataFrame, event_field: str, delay_ms: int, closing: Closing) -> int:
    """How many of the decoded ``rows`` are late (see the module docstring)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # records with the same Kafka timestamp arrived together: no order between partitions
    arrival = Window.orderBy(F.unix_micros("kafka_timestamp")).rangeBetween(
        Window.unboundedPreceding, -1
    )
    ts = F.unix_micros(rowtime_of(rows, event_field))  # the job's rowtime (ms)
    watermark = F.max(ts).over(arrival) - F.lit(delay_ms * 1000)
    late = rows.select((closing.last_end(ts) <= watermark).alias("late"))
    return late.where("late").count()
