"""Samples: bounded, reproducible reads of a stream, decoded like the production job decodes.

:func:`sample` reads one spec stream with confluent-kafka, by partition **assignment**:
it never joins a consumer group (the ``group.id`` librdkafka insists on is a throwaway
``workbench-sample-<uuid>``), never stores or commits an offset. Three modes:

* ``last=N``: the last ``N`` messages of every partition (from the watermark offsets);
* ``start=`` / ``end=``: a time range, turned into offsets with ``offsets_for_times``
  (``end`` defaults to now: the end of each partition when sampling starts);
* ``tail_s=T``: what arrives in the next ``T`` seconds, from the current end.

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

import functools
import json
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import SpecError, UnknownNameError, WorkbenchError
from workbench.sources.kafka import METADATA

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
FETCH = 5000


class SampleError(WorkbenchError):
    """A sample that cannot be taken or read again (broker, offsets, options)."""


@dataclass(frozen=True)
class Record:
    """One Kafka record as read; ``timestamp`` in epoch milliseconds (None: the topic has none)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class SampleProgress:
    """How far a read is: ``total`` is None for a tail (unbounded until ``deadline_s``)."""

    read: int
    total: int | None
    elapsed_s: float
    duration_s: float | None = None

    @property
    def fraction(self) -> float:
        if self.duration_s:
            return min(self.elapsed_s / self.duration_s, 1.0)
        return self.read / self.total if self.total else 1.0


Progress = Callable[[SampleProgress], None]


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
        """What identifies the sample's content: servers, message, schemas and offsets."""
        ranges = tuple(
            (t, p, s, e)
            for t, parts in sorted(self.offsets.items())
            for p, (s, e) in sorted(parts.items())
        )
        return (self.bootstrap, self.message, self.event_timestamp_field, self.schemas, ranges)

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
        from workbench.spec import StreamSpec

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
        with _Consumer(self.bootstrap, self.stream) as consumer:
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
        return registry_for(self.schemas)

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


def registry_for(schemas: Iterable[str] = ()) -> SchemaRegistry:
    """The default registry, plus a spec's extra schema sources."""
    from workbench.schemas import SchemaRegistry, default_registry

    extra = list(schemas)
    return SchemaRegistry(*default_registry().sources, *extra) if extra else default_registry()


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


def decoded_records(
    spark: SparkSession, raw: DataFrame, stream: StreamSpec, registry: SchemaRegistry
) -> DataFrame:
    """``raw`` with ``_decoded`` (struct<message, error>) in front, as the job's source has."""
    from pyspark.sql import functions as F

    from workbench.sources.protobuf import decoder

    message = registry.resolve(stream.message)
    decode_ = decoder(spark, registry, message, required_field=stream.event_timestamp_field)
    clashes = sorted(set(METADATA) & set(registry_fields(registry, message)))
    if clashes:
        raise SpecError(
            "streams[].message",
            f"{message} has fields named {', '.join(clashes)}, which the Kafka metadata "
            "columns use; rename them in the .proto",
        )
    return raw.select(decode_(F.col("value")).alias("_decoded"), *raw.columns)


def decoded_rows(records: DataFrame) -> DataFrame:
    """The records that decoded: message fields plus the ``kafka_*`` metadata columns."""
    from pyspark.sql import functions as F

    return records.where(F.col("_decoded.error").isNull()).select(
        "_decoded.message.*", *(F.col(src).alias(name) for name, src in METADATA.items())
    )


def registry_fields(registry: SchemaRegistry, message: str) -> list[str]:
    return [f.name for f in registry.descriptor(message).fields]


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
    progress: Progress | None = None,
    schemas: Iterable[str] = (),
) -> Sample:
    """Sample ``stream`` (a :class:`StreamSpec`, or a spec and its ``table``).

    Give exactly one mode: ``last`` (messages per partition), ``start`` (and ``end``: a
    datetime, epoch milliseconds or ISO-8601) or ``tail_s`` (seconds). ``bootstrap``
    defaults to the stream's ``bootstrap_servers``.
    """
    stream, schemas = _stream_of(stream, table, schemas)
    modes = [last is not None, start is not None or end is not None, tail_s is not None]
    if sum(modes) != 1:
        raise SampleError("give one of last=N, start=/end= (a time range) or tail_s=SECONDS")
    message = registry_for(schemas).resolve(stream.message)
    servers = bootstrap or stream.bootstrap_servers
    taken_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with _Consumer(servers, stream) as consumer:
        partitions = consumer.partitions()
        if last is not None:
            ranges, mode = consumer.last(partitions, last), f"last {last:,} per partition"
            records = consumer.read(ranges, progress)
        elif tail_s is not None:
            ranges, records = consumer.tail(partitions, tail_s, progress)
            mode = f"tail {tail_s:g}s from {taken_at}"
        else:
            ranges, mode = consumer.between(partitions, start, end), _range_mode(start, end)
            records = consumer.read(ranges, progress)
    offsets: Offsets = {}
    for (topic, partition), bounds in sorted(ranges.items()):
        offsets.setdefault(topic, {})[partition] = bounds
    return Sample(stream, message, servers, offsets, records, tuple(schemas), mode, taken_at)


def _stream_of(
    stream: StreamSpec | DaggerSpec, table: str | None, schemas: Iterable[str]
) -> tuple[StreamSpec, list[str]]:
    from workbench.spec import DaggerSpec

    if not isinstance(stream, DaggerSpec):
        return stream, list(schemas)
    if table is None and len(stream.streams) > 1:
        raise UnknownNameError("stream", "(none given)", [s.table for s in stream.streams])
    chosen = stream.stream(table) if table else stream.streams[0]
    return chosen, [*stream.schemas, *schemas]


def to_millis(moment: datetime | int | str) -> int:
    """Epoch milliseconds of a datetime (naive = UTC), ISO-8601 text or epoch milliseconds."""
    if isinstance(moment, int):
        return moment
    if isinstance(moment, str):
        if re.fullmatch(r"-?\d+", moment.strip()):
            return int(moment)
        try:
            moment = datetime.fromisoformat(moment.strip().replace("Z", "+00:00"))
        except ValueError:
            raise SampleError(f"'{moment}' is not a time: give ISO-8601 or epoch ms") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _range_mode(start: Any, end: Any) -> str:
    def text(moment: Any) -> str:
        ms = to_millis(moment)
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"

    first = text(start) if start is not None else "the start"
    return f"{first} to {text(end) if end is not None else 'now'}"


Partition = tuple[str, int]


class _Consumer:
    """A confluent-kafka consumer that only ever assigns partitions and never commits."""

    def __init__(self, bootstrap: str, stream: StreamSpec, timeout_s: float = 30.0):
        from confluent_kafka import Consumer, KafkaException

        from workbench.infra.kafka import LOG

        self.bootstrap, self.stream, self.timeout_s = bootstrap, stream, timeout_s
        config: dict[str, Any] = {
            key.removeprefix("kafka."): value for key, value in stream.kafka_options.items()
        }
        config.update(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"workbench-sample-{uuid.uuid4().hex}",  # librdkafka needs one
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",  # offsets gone (retention): say so, never skip
                "isolation.level": "read_uncommitted",  # as Spark's Kafka source reads
                "fetch.max.bytes": 52_428_800,
                "logger": LOG,
            }
        )
        try:
            self.consumer = Consumer(config)
        except KafkaException as err:
            raise SampleError(f"cannot create a Kafka consumer for {bootstrap}: {err}") from None

    def __enter__(self) -> _Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.consumer.close()  # nothing to commit: auto-commit is off and nothing is stored

    def partitions(self) -> list[Partition]:
        metadata = self._call(lambda: self.consumer.list_topics(timeout=self.timeout_s))
        known = sorted(t for t in metadata.topics if not t.startswith("__"))
        if self.stream.topics:
            names = list(self.stream.topics)
            for name in names:
                if name not in metadata.topics or metadata.topics[name].error is not None:
                    raise UnknownNameError("topic", name, known, where=f"at {self.bootstrap}")
        else:
            pattern = re.compile(str(self.stream.topic_pattern))
            names = [t for t in known if pattern.fullmatch(t)]
            if not names:
                raise SampleError(
                    f"no topic at {self.bootstrap} matches '{pattern.pattern}'. Topics: "
                    f"{', '.join(known) or '(none)'}."
                )
        return [(t, p) for t in names for p in sorted(metadata.topics[t].partitions)]

    def watermarks(self, partitions: list[Partition]) -> dict[Partition, tuple[int, int]]:
        from confluent_kafka import TopicPartition

        def marks(tp: Partition) -> tuple[int, int]:
            return self.consumer.get_watermark_offsets(TopicPartition(*tp), timeout=self.timeout_s)

        return {tp: self._call(functools.partial(marks, tp)) for tp in partitions}

    def last(self, partitions: list[Partition], n: int) -> dict[Partition, tuple[int, int]]:
        if n < 0:
            raise SampleError(f"last={n}: give a number of messages per partition, 0 or more")
        marks = self.watermarks(partitions)
        return {tp: (max(low, high - n), high) for tp, (low, high) in marks.items()}

    def between(
        self, partitions: list[Partition], start: Any, end: Any
    ) -> dict[Partition, tuple[int, int]]:
        marks = self.watermarks(partitions)
        first = self._times(partitions, start, marks, lambda low, high: low)
        stop = self._times(partitions, end, marks, lambda low, high: high)
        return {tp: (first[tp], max(first[tp], stop[tp])) for tp in partitions}

    def _times(self, partitions, moment, marks, default) -> dict[Partition, int]:
        """The first offset at or after ``moment`` per partition (the end when none is)."""
        from confluent_kafka import TopicPartition

        if moment is None:
            return {tp: default(*marks[tp]) for tp in partitions}
        ms = to_millis(moment)
        asked = [TopicPartition(t, p, ms) for t, p in partitions]
        found = self._call(lambda: self.consumer.offsets_for_times(asked, timeout=self.timeout_s))
        out = {}
        for tp in found:
            low, high = marks[(tp.topic, tp.partition)]
            out[(tp.topic, tp.partition)] = high if tp.offset < 0 else max(low, tp.offset)
        return out

    def read(
        self, ranges: Mapping[Partition, tuple[int, int]], progress: Progress | None
    ) -> list[Record]:
        """Every record of ``ranges`` (each ``[start, end)``), in partition order."""
        todo = {tp: end for tp, (start, end) in ranges.items() if end > start}
        total = sum(end - start for start, end in ranges.values())
        records = self._consume(ranges, todo, total, None, progress)
        if todo:
            missing = ", ".join(f"{t}[{p}]" for t, p in sorted(todo))
            raise SampleError(
                f"reading the sample's offsets from {self.bootstrap} timed out on {missing} "
                f"after {self.timeout_s:g}s without a record"
            )
        return records

    def tail(
        self, partitions: list[Partition], seconds: float, progress: Progress | None
    ) -> tuple[dict[Partition, tuple[int, int]], list[Record]]:
        """What arrives in the next ``seconds``, from each partition's current end."""
        from confluent_kafka import TopicPartition

        marks = self.watermarks(partitions)
        ranges = {tp: (high, high) for tp, (_, high) in marks.items()}
        todo: dict[Partition, int | None] = dict.fromkeys(partitions)
        records = self._consume(ranges, todo, None, seconds, progress)
        positions = self.consumer.position([TopicPartition(t, p) for t, p in partitions])
        ends = {(tp.topic, tp.partition): tp.offset for tp in positions}
        last = {(r.topic, r.partition): r.offset + 1 for r in records}
        return {
            tp: (start, max(start, ends.get(tp, -1), last.get(tp, start)))
            for tp, (start, _) in ranges.items()
        }, records

    def _consume(self, ranges, todo, total, duration_s, progress) -> list[Record]:
        from confluent_kafka import KafkaError, TopicPartition

        assigned = [TopicPartition(t, p, ranges[(t, p)][0]) for t, p in todo]
        if not assigned:
            return []
        self.consumer.assign(assigned)
        records: list[Record] = []
        t0 = idle_since = time.monotonic()
        while todo:
            now = time.monotonic()
            if duration_s is not None and now - t0 >= duration_s:
                break
            if duration_s is None and now - idle_since > self.timeout_s:
                break
            wait = 0.2 if duration_s is None else max(0.0, min(0.2, duration_s - (now - t0)))
            batch = self.consumer.consume(FETCH, timeout=wait)
            if batch:
                idle_since = time.monotonic()
            for message in batch:
                tp = (message.topic(), message.partition())
                error = message.error()
                if error is not None:
                    if error.code() != KafkaError._PARTITION_EOF:
                        raise SampleError(f"reading {tp[0]}[{tp[1]}] failed: {error.str()}")
                    if duration_s is None:
                        todo.pop(tp, None)  # at the end, which is past the range's end
                    continue
                if tp not in todo:
                    continue
                end: int | None = todo[tp]
                offset = message.offset()
                assert offset is not None  # a record (not an event) has one
                if end is not None and offset >= end:
                    todo.pop(tp)
                    continue
                records.append(_record(message))
                if end is not None and offset + 1 >= end:
                    todo.pop(tp)
            if progress is not None:
                progress(SampleProgress(len(records), total, time.monotonic() - t0, duration_s))
        return records

    def _call(self, fn: Callable[[], Any]) -> Any:
        from confluent_kafka import KafkaException

        try:
            return fn()
        except KafkaException as err:
            raise SampleError(f"Kafka at {self.bootstrap}: {err.args[0].str()}") from None


def _record(message: Any) -> Record:
    kind, stamp = message.timestamp()
    return Record(
        message.topic(),
        message.partition(),
        message.offset(),
        stamp if kind else None,  # TIMESTAMP_NOT_AVAILABLE is 0
        message.key(),
        message.value(),
    )
