"""Samples: bounded, reproducible reads of a stream, decoded like the production job decodes.

:func:`sample` reads one spec stream with confluent-kafka, by partition **assignment**
(:mod:`workbench.sources.partitions`): it never joins a consumer group (the ``group.id``
librdkafka insists on is a throwaway ``workbench-sample-<uuid>``), never stores or
commits an offset. Three modes:

* ``last=N``: the last ``N`` messages of every partition (from the watermark offsets);
* ``start=`` / ``end=``: a time range, turned into offsets with ``offsets_for_times``
  (``end`` defaults to now: the end of each partition when sampling starts);
* ``tail_s=T``: what arrives in the next ``T`` seconds, from the current end;
* ``offsets={topic: {partition: (start, end)}}``: exactly those records (e.g. what a
  producer just wrote: :func:`workbench.notebook.examples.demo_events`).

A :class:`Sample` records its exact half-open offset ranges ``[start, end)`` per topic and
partition, the bootstrap servers, the stream (table, message, event-time field) and holds
the raw records. ``save(path)`` writes the offsets as JSON; :meth:`Sample.load` and
:meth:`Sample.resample` read exactly those offsets again, and
:meth:`Sample.spark_options` gives them to Spark's Kafka batch source
(``workbench replay --sample``), an independent read of the same records.

:meth:`Sample.decoded` builds a Spark frame of the raw records (pandas → Arrow) and decodes
it with :func:`workbench.sources.protobuf.decoder`, the job's JVM decoder, so undecodable
records are counted exactly as the job's dead letters. The decoded frame is cached per
Spark application and sample offsets (:data:`CACHE`), so a second preview does not decode
again.

Progress: pass ``progress=callable``; it gets a :class:`SampleProgress` after every fetch
(the notebook shows it as a progress bar, :mod:`workbench.notebook.progress`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import UnknownNameError
from workbench.moments import epoch_ms
from workbench.schemas import default_registry_with
from workbench.sources.kafka import FETCH_WAIT, decoded_records, decoded_rows
from workbench.sources.partitions import (
    PartitionReader,
    Progress,
    Record,
    SampleError,
    SampleProgress,
)
from workbench.spec import DaggerSpec, StreamSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.schemas import SchemaRegistry
    from workbench.spec import DaggerSpec, StreamSpec

FORMAT_VERSION = 1
#: Partition → (start, end): the records of offsets start <= offset < end.
Offsets = dict[str, dict[int, tuple[int, int]]]
RAW_DDL = (
    "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP"
)


@dataclass(frozen=True)
class Decoded:
    """A sample decoded by the job's JVM decoder: ``rows`` holds the message fields and the
    ``kafka_*`` columns of every record that decoded (a cached Spark frame)."""

    rows: DataFrame
    records: int
    decoded: int
    undecodable: int
    errors: list[str]  # a few distinct decode errors, for people
    cached: DataFrame  # the persisted frame (records and their decoded structs)


@dataclass
class Sample:
    """A bounded read of one stream: its exact offsets and its raw records."""

    stream: StreamSpec
    message: str  # full protobuf name
    bootstrap: str
    offsets: Offsets
    records: list[Record] = field(default_factory=list, repr=False)
    schemas: tuple[str, ...] = ()  # extra schema sources of the spec (see DaggerSpec.schemas)
    mode: str = ""  # how it was taken, for people: "last 100", "tail 10s", a time range
    taken_at: str = ""

    @property
    def table(self) -> str:
        return self.stream.table

    @property
    def event_timestamp_field(self) -> str:
        return self.stream.event_timestamp_field

    @property
    def size(self) -> int:
        """Offsets in the sample's ranges (a compacted or transactional topic holds fewer)."""
        return sum(e - s for parts in self.offsets.values() for s, e in parts.values())

    def __len__(self) -> int:
        return len(self.records)

    @property
    def key(self) -> tuple:
        """What identifies the sample's content: servers, message, how it decodes, schemas
        and offsets."""
        ranges = tuple(
            (t, p, s, e)
            for t, parts in sorted(self.offsets.items())
            for p, (s, e) in sorted(parts.items())
        )
        decoding = (self.event_timestamp_field, self.stream.max_recursion_depth)
        return (self.bootstrap, self.message, *decoding, self.schemas, ranges)

    # --- persistence ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "table": self.table,
            "message": self.message,
            "bootstrap": self.bootstrap,
            "mode": self.mode,
            "taken_at": self.taken_at,
            "records": len(self.records),
            "schemas": list(self.schemas),
            "stream": self.stream.model_dump(mode="json", exclude_defaults=True),
            "offsets": {
                t: {str(p): [s, e] for p, (s, e) in sorted(parts.items())}
                for t, parts in sorted(self.offsets.items())
            },
        }

    def save(self, path: str | Path) -> Path:
        """Write the sample's offsets (not its records) as JSON; :meth:`load` reads them again."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(
        cls, path: str | Path, *, read: bool = True, progress: Progress | None = None
    ) -> Sample:
        """The sample saved at ``path``; ``read`` fetches its records again from Kafka."""

        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            sample = cls(
                stream=StreamSpec.model_validate(data["stream"]),
                message=data["message"],
                bootstrap=data["bootstrap"],
                offsets={
                    t: {int(p): (int(r[0]), int(r[1])) for p, r in parts.items()}
                    for t, parts in data["offsets"].items()
                },
                schemas=tuple(data.get("schemas", ())),
                mode=data.get("mode", ""),
                taken_at=data.get("taken_at", ""),
            )
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise SampleError(f"{path}: not a saved sample ({err})") from None
        return sample.resample(progress) if read else sample

    def resample(self, progress: Progress | None = None) -> Sample:
        """The same sample read again: exactly the recorded offsets."""
        with PartitionReader(self.bootstrap, self.stream) as consumer:
            ranges = {(t, p): r for t, parts in self.offsets.items() for p, r in parts.items()}
            records = consumer.read(ranges, progress)
        return Sample(
            self.stream, self.message, self.bootstrap, self.offsets, records,
            self.schemas, self.mode, self.taken_at,
        )  # fmt: skip

    # --- Spark ----------------------------------------------------------------------------

    def spark_options(self) -> dict[str, str]:
        """Options for Spark's Kafka batch source reading exactly the sample's offsets."""
        options = {
            **FETCH_WAIT,
            "kafka.bootstrap.servers": self.bootstrap,
            "assign": json.dumps({t: sorted(parts) for t, parts in self.offsets.items()}),
            "startingOffsets": json.dumps(self._bounds(0)),
            "endingOffsets": json.dumps(self._bounds(1)),
        }
        for key, value in self.stream.kafka_options.items():
            options[key if key.startswith("kafka.") else f"kafka.{key}"] = str(value)
        return options

    def _bounds(self, index: int) -> dict[str, dict[str, int]]:
        return {
            t: {str(p): r[index] for p, r in parts.items()} for t, parts in self.offsets.items()
        }

    def registry(self) -> SchemaRegistry:

        return default_registry_with(self.schemas)

    def raw_frame(self, spark: SparkSession) -> DataFrame:
        """The raw records as a Spark frame with the Kafka source's columns (via Arrow)."""
        import pandas as pd

        if not self.records:
            return spark.createDataFrame([], RAW_DDL)
        columns = {
            "key": [r.key for r in self.records],
            "value": [r.value for r in self.records],
            "topic": [r.topic for r in self.records],
            "partition": [r.partition for r in self.records],
            "offset": [r.offset for r in self.records],
            "timestamp": pd.to_datetime([r.timestamp for r in self.records], unit="ms", utc=True),
        }
        return spark.createDataFrame(pd.DataFrame(columns), RAW_DDL)

    def decoded(self, spark: SparkSession) -> Decoded:
        """The sample decoded by the job's decoder; cached per Spark application and offsets."""
        cache_key = (spark.sparkContext.applicationId, self.key, len(self.records))
        found = CACHE.get(cache_key)
        if found is None:
            found = CACHE[cache_key] = decode(spark, self.raw_frame(spark), self, self.registry())
        return found

    def to_pandas(self, spark: SparkSession, limit: int = 1000) -> Any:
        """The first ``limit`` decoded records as a pandas frame."""
        return self.decoded(spark).rows.limit(limit).toPandas()

    # --- display --------------------------------------------------------------------------

    def describe(self) -> str:
        parts = sum(len(p) for p in self.offsets.values())
        topics = ", ".join(sorted(self.offsets))
        return (
            f"sample of '{self.table}' ({self.message}): {len(self.records):,} records from "
            f"{topics} ({parts} partitions), {self.mode}"
        )

    def __str__(self) -> str:
        return self.describe()

    def _repr_html_(self) -> str:
        import html

        rows = "".join(
            f"<tr><td>{html.escape(t)}</td><td>{p}</td><td>{s:,}</td><td>{e:,}</td></tr>"
            for t, parts in sorted(self.offsets.items())
            for p, (s, e) in sorted(parts.items())
        )
        return (
            f"<div><b>{html.escape(self.describe())}</b><table><thead><tr><th>topic</th>"
            f"<th>partition</th><th>start</th><th>end (excl.)</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>"
        )


#: (Spark application id, Sample.key, records) → the decoded sample.
CACHE: dict[tuple, Decoded] = {}


def clear_cache() -> None:
    """Forget every decoded sample (and release Spark's cached blocks)."""
    for decoded in CACHE.values():
        decoded.cached.unpersist()
    CACHE.clear()


def decode(
    spark: SparkSession, raw: DataFrame, sample: Sample, registry: SchemaRegistry
) -> Decoded:
    """Decode ``raw`` (Kafka source columns) as the job does; the result is cached in Spark."""
    from pyspark.sql import functions as F

    records = decoded_records(spark, raw, sample.stream, registry).persist()
    error = F.col("_decoded.error")
    stats = records.agg(
        F.count(F.lit(1)).alias("records"),
        F.count(F.when(error.isNull(), 1)).alias("decoded"),
        F.slice(F.array_sort(F.collect_set(error)), 1, 5).alias("errors"),
    ).first()
    assert stats is not None
    return Decoded(
        decoded_rows(records), stats["records"], stats["decoded"],
        stats["records"] - stats["decoded"], list(stats["errors"]), records,
    )  # fmt: skip


# --- taking a sample --------------------------------------------------------------------


def sample(
    stream: StreamSpec | DaggerSpec,
    *,
    table: str | None = None,
    bootstrap: str | None = None,
    last: int | None = None,
    start: datetime | int | str | None = None,
    end: datetime | int | str | None = None,
    tail_s: float | None = None,
    offsets: Offsets | None = None,
    progress: Progress | None = None,
    schemas: Iterable[str] = (),
) -> Sample:
    """Sample ``stream`` (a :class:`StreamSpec`, or a spec and its ``table``).

    Give exactly one mode: ``last`` (messages per partition), ``start`` (and ``end``: a
    datetime, epoch milliseconds or ISO-8601), ``tail_s`` (seconds) or ``offsets``
    (``{topic: {partition: (start, end)}}``, end excluded). ``bootstrap`` defaults to the
    stream's ``bootstrap_servers``.
    """
    stream, schemas = _stream_of(stream, table, schemas)
    modes = [last, start is not None or end is not None or None, tail_s, offsets]
    if sum(mode is not None for mode in modes) != 1:
        raise SampleError(
            "give one of last=N, start=/end= (a time range), tail_s=SECONDS or offsets="
        )

    message = default_registry_with(schemas).resolve(stream.message)
    servers = bootstrap or stream.bootstrap_servers
    taken_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with PartitionReader(servers, stream) as consumer:
        partitions = consumer.partitions()
        if last is not None:
            ranges, mode = consumer.last(partitions, last), f"last {last:,} per partition"
            records = consumer.read(ranges, progress)
        elif offsets is not None:
            ranges, mode = _given(offsets, partitions), "given offsets"
            records = consumer.read(ranges, progress)
        elif tail_s is not None:
            ranges, records = consumer.tail(partitions, tail_s, progress)
            mode = f"tail {tail_s:g}s from {taken_at}"
        else:
            ranges, mode = consumer.between(partitions, start, end), _range_mode(start, end)
            records = consumer.read(ranges, progress)
    read: Offsets = {}
    for (topic, partition), bounds in sorted(ranges.items()):
        read.setdefault(topic, {})[partition] = bounds
    return Sample(stream, message, servers, read, records, tuple(schemas), mode, taken_at)


def _given(offsets: Offsets, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], Any]:
    """``offsets`` as reader ranges; each must be a partition of the stream."""
    ranges = {(t, int(p)): (int(r[0]), int(r[1])) for t, parts in offsets.items()
              for p, r in parts.items()}  # fmt: skip
    unknown = [f"{t}[{p}]" for t, p in ranges if (t, p) not in partitions]
    if unknown:
        known = ", ".join(f"{t}[{p}]" for t, p in partitions)
        raise SampleError(f"offsets for {unknown[0]}: not a partition of the stream ({known})")
    return ranges


def _stream_of(
    stream: StreamSpec | DaggerSpec, table: str | None, schemas: Iterable[str]
) -> tuple[StreamSpec, list[str]]:

    if not isinstance(stream, DaggerSpec):
        return stream, list(schemas)
    if table is None and len(stream.streams) > 1:
        raise UnknownNameError("stream", "(none given)", [s.table for s in stream.streams])
    chosen = stream.stream(table) if table else stream.streams[0]
    return chosen, [*stream.schemas, *schemas]


def _range_mode(start: Any, end: Any) -> str:
    def text(moment: Any) -> str:
        ms = epoch_ms(moment)
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"

    first = text(start) if start is not None else "the start"
    return f"{first} to {text(end) if end is not None else 'now'}"


__all__ = ["Record", "Sample", "SampleError", "SampleProgress", "sample"]
