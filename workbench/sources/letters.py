"""Dead letters collected where a stream's records are decoded, off the rows' hot path.

A :class:`LetterTap` belongs to one stream of one query. :meth:`LetterTap.keep` computes,
for each decoded record (:func:`workbench.sources.kafka.decoded_records`), ``_decoded.error
IS NULL OR dead_letters_<table>(topic, partition, offset, timestamp, key, value, error)``
into a column (:data:`KEPT`) and filters on it. Spark evaluates OR left to right and stops
at true, so the UDF (``io.daggerworkbench.udf.DeadLetters`` in the UDF jar) runs for the
records that did not decode only: it adds each to an accumulator of the tap, as JSON, and
drops it from the rows. A record that decoded is tested for a null error inside Spark's
generated code and nothing of it is copied, so a plan reads Kafka, decodes, aggregates and
writes in one generated pipeline, as a hand-written query with no dead letters would.

Why a column and not the filter's own condition: Spark's generated filter reads every
column its condition names before testing it, so each record's key would be copied and its
topic read although only undecodable records need them; a projection reads a column where
the expression first needs it, here inside the OR's second branch (docs/benchmarks.md,
item 23: 70-90 bytes less allocated per record). The projection is nondeterministic, so no
filter of the SQL moves below it and drops a record before the tap has seen it.

Spark merges each task's letters into the driver's accumulator when the task ends: once a
Spark job has computed a micro-batch, :meth:`LetterTap.drain` hands them out (no further
Spark job) and starts the next batch empty. A retried task adds its letters again, so
:func:`workbench.streaming.deadletters.collected` keeps one per table, topic, partition and offset.

Memory stays bounded whatever share of a batch fails to decode (a producer writing another
message type, a breaking schema change): the accumulator (``LetterAccumulator.java``) holds
letters whole up to :data:`HELD_BYTES` of JSON per task and on the driver, and of the rest
only their span of offsets per topic partition (:class:`Spilled`). The tap's ``reread``
reads those spans again from Kafka, decoding as the stream does, for the records that fail
there: the same letters, read by a distributed Spark job instead of through the driver.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

JAVA_CLASS = "io.daggerworkbench.udf.DeadLetters"
#: The name prefix of the tap's UDF in plans (``dead_letters_<table>``).
UDF_PREFIX = "dead_letters_"
#: The column :meth:`LetterTap.keep` computes its condition into, and filters on.
KEPT = "_kept"
#: Bytes of letters (their JSON) a task's or the driver's accumulator holds whole; past it,
#: only where the letters are. 4 MiB is some 7,000 dead bookings.
HELD_BYTES = 4 << 20


@dataclass(frozen=True)
class Spilled:
    """Letters a tap did not hold: ``count`` of them at offsets ``first``..``last``
    (inclusive) of one topic partition, among records that decoded."""

    topic: str
    partition: int
    first: int
    last: int
    count: int

    def holds(self, topic: str, partition: int, offset: int) -> bool:
        return (topic, partition) == (self.topic, self.partition) and (
            self.first <= offset <= self.last
        )


@dataclass(frozen=True)
class Drained:
    """What a tap collected since its last drain: whole letters (JSON objects) and spans."""

    held: list[dict[str, Any]]
    spilled: list[Spilled]


#: Reads spans of a stream's topic partitions again as dead letters (a batch DataFrame of
#: :data:`workbench.streaming.deadletters.COLUMNS`); :func:`workbench.sources.kafka.open_stream`
#: gives one.
Reread = Callable[[list[Spilled]], "DataFrame"]


class LetterTap:
    """The dead letters of stream ``table`` in the plans filtered with :meth:`keep`;
    ``reread`` reads spilled ones again (None: a tap of records not read from Kafka)."""

    def __init__(
        self,
        spark: SparkSession,
        table: str,
        reread: Reread | None = None,
        held_bytes: int | None = None,
    ):
        jvm = spark._jvm
        assert jvm is not None, "dead letters need a classic (not Spark Connect) session"
        self.table, self.reread = table, reread
        budget = HELD_BYTES if held_bytes is None else held_bytes
        self._tap = getattr(jvm, JAVA_CLASS).create(spark._jsc.sc(), table, budget)  # type: ignore[union-attr]

    def keep(self, records: DataFrame) -> DataFrame:
        """``records`` that decoded; the others go to the tap as the plan runs."""
        from pyspark.sql import functions as F
        from pyspark.sql.classic.column import Column

        columns = ["_decoded.error", "topic", "partition", "offset", "timestamp", "key", "value"]
        condition = self._tap.keep(*(F.col(c)._jc for c in columns))  # type: ignore[attr-defined]
        return records.withColumn(KEPT, Column(condition)).where(F.col(KEPT)).drop(KEPT)

    def drain(self) -> Drained:
        """What was collected since the last drain; the tap is left empty."""
        taken = json.loads(self._tap.drain())
        return Drained(taken["held"], [Spilled(**span) for span in taken["spilled"]])
