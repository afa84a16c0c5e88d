"""The Kafka source: Spark's Kafka connector, decoded on the JVM, with dead letters split off.

:func:`connector_jars` is a jar provider for :mod:`workbench.runtime.spark`: Spark's Kafka
connector matching the installed pyspark, fetched from Maven Central (Spark's own jars
are excluded, so nothing is loaded twice).

:func:`open_stream` reads one spec stream into ``rows``: the decoded message fields plus
:data:`METADATA` columns. The records that did not decode (or had no event time) leave
the plan through the stream's :class:`~workbench.sources.letters.LetterTap`, each with its
topic, partition, offset, Kafka timestamp, key, raw bytes and error. So each micro-batch
scans Kafka and decodes once; :mod:`workbench.streaming.deadletters` takes the tap's letters.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import SpecError
from workbench.runtime.maven import SPARK_PROVIDED, fetch
from workbench.sources.letters import LetterTap
from workbench.sources.protobuf import decoder

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.schemas import SchemaRegistry
    from workbench.sources.letters import LetterTap, Spilled
    from workbench.spec import StreamSpec
    from workbench.streams import ResolvedStream

#: Kafka record metadata each stream table carries next to the message's fields.
METADATA = {
    "kafka_topic": "topic",
    "kafka_partition": "partition",
    "kafka_offset": "offset",
    "kafka_timestamp": "timestamp",
}


def connector_jars() -> list[Path]:
    """spark-sql-kafka (and kafka-clients, commons-pool2, the token provider) for this pyspark."""
    import pyspark

    version = pyspark.__version__
    coordinate = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{version}"
    return fetch(f"spark-kafka-{version}", [coordinate], exclude=SPARK_PROVIDED)


@dataclass(frozen=True)
class StreamFrames:
    table: str
    rows: DataFrame
    #: where the records of ``rows`` that did not decode go, as the plan runs
    letters: LetterTap


#: Kafka client timeouts for the source, unless the spec's ``kafka_options`` set either:
#: Spark asks the broker for offsets ``fetchOffset.numRetries`` (3) times, each call
#: bounded by ``default.api.timeout.ms`` (Kafka's default 60 s), so an unreachable broker
#: fails the query after about a minute instead of four (the admin client refuses an API
#: timeout below the request timeout, hence both).
BOUNDED_TIMEOUTS = {"kafka.request.timeout.ms": "10000", "kafka.default.api.timeout.ms": "20000"}
#: How long the broker holds a task's fetch that finds no records, unless ``kafka_options``
#: say: a task reads only offsets the broker has, so a fetch finds none only when the consumer
#: fetches ahead past the end of the log, and Kafka's default (500 ms) then held every task
#: that read to the end, wave by wave: a micro-batch reading 500,000 bookings from 4
#: partitions on 2 cores took about 1 s longer when it reached the end of the topic.
FETCH_WAIT = {"kafka.fetch.max.wait.ms": "10"}


def reader_options(stream: StreamSpec, bootstrap_servers: str | None = None) -> dict[str, str]:
    """The Spark Kafka source options for ``stream`` (``kafka.*`` options pass through)."""
    options = {"kafka.bootstrap.servers": bootstrap_servers or stream.bootstrap_servers}
    if stream.topics:
        options["subscribe"] = ",".join(stream.topics)
    else:
        options["subscribePattern"] = str(stream.topic_pattern)
    options.update(_starting(stream.starting_offsets))
    if stream.max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(stream.max_offsets_per_trigger)
    if stream.group_id:
        options["groupIdPrefix"] = stream.group_id
    given = {
        key if key.startswith("kafka.") else f"kafka.{key}": str(value)
        for key, value in stream.kafka_options.items()
    }
    if not given.keys() & BOUNDED_TIMEOUTS.keys():
        options.update(BOUNDED_TIMEOUTS)
    options.update(FETCH_WAIT)
    options.update(given)
    return options


#: A start time later than every record of a partition starts it at its end (new records),
#: rather than failing the query (Spark's default): a failover from a time relies on it.
BY_TIMESTAMP = {"startingOffsetsByTimestampStrategy": "latest"}


def _starting(value: Any) -> dict[str, str]:
    import json

    if isinstance(value, dict):
        return {"startingOffsets": json.dumps(value)}
    if isinstance(value, int):
        return {"startingTimestamp": str(value), **BY_TIMESTAMP}
    if value in ("earliest", "latest"):
        return {"startingOffsets": value}
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))  # spec-checked
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return {"startingTimestamp": str(int(moment.timestamp() * 1000)), **BY_TIMESTAMP}


def decoded_records(
    spark: SparkSession,
    raw: DataFrame,
    stream: StreamSpec,
    registry: SchemaRegistry,
    fields: Collection[str] | None = None,
) -> DataFrame:
    """Kafka records (``raw``, streaming or batch) with ``_decoded`` (struct<message, error>)
    in front: the JVM decoder with the stream's message and event-time field, decoding the
    top-level ``fields`` only (None: all; see :func:`workbench.sources.protobuf.decoder`)."""
    from pyspark.sql import functions as F

    message = registry.resolve(stream.message)
    clashes = sorted(set(METADATA) & {f.name for f in registry.descriptor(message).fields})
    if clashes:
        raise SpecError(
            "streams[].message",
            f"{message} has fields named {', '.join(clashes)}, which the Kafka metadata "
            "columns use; rename them in the .proto",
        )
    decode = decoder(
        spark,
        registry,
        message,
        required_field=stream.event_timestamp_field,
        max_recursion_depth=stream.max_recursion_depth,
        fields=fields,
    )
    return raw.select(decode(F.col("value")).alias("_decoded"), *raw.columns)


def decoded_rows(records: DataFrame, letters: LetterTap | None = None) -> DataFrame:
    """The records that decoded: message fields plus the :data:`METADATA` columns; the
    others go to ``letters`` (None: they are dropped)."""
    from pyspark.sql import functions as F

    kept = (
        records.where(F.col("_decoded.error").isNull())
        if letters is None
        else letters.keep(records)
    )
    return kept.select(
        "_decoded.message.*", *(F.col(src).alias(name) for name, src in METADATA.items())
    )


def open_stream(
    spark: SparkSession,
    resolved: ResolvedStream,
    registry: SchemaRegistry,
    bootstrap_servers: str | None = None,
    fields: Collection[str] | None = None,
) -> StreamFrames:
    """The decoded rows of one stream (a streaming frame whose dead letters go to its tap),
    with the message's top-level ``fields`` only (None: all; see
    :mod:`workbench.sources.pruning`)."""

    stream = resolved.spec
    raw = spark.readStream.format("kafka").options(**reader_options(stream, bootstrap_servers))
    records = decoded_records(spark, raw.load(), stream, registry, fields)

    def reread(spans: list[Spilled]) -> DataFrame:
        return letters_again(spark, stream, registry, spans, bootstrap_servers, fields)

    letters = LetterTap(spark, stream.table, reread)
    return StreamFrames(stream.table, decoded_rows(records, letters), letters)


#: Records per task when spilled dead letters are read again (so a reader streaming them to
#: the driver, e.g. a Kafka dead-letter topic, holds this many at most).
REREAD_RECORDS_PER_TASK = 50_000


def letters_again(
    spark: SparkSession,
    stream: StreamSpec,
    registry: SchemaRegistry,
    spans: list[Spilled],
    bootstrap_servers: str | None = None,
    fields: Collection[str] | None = None,
) -> DataFrame:
    """The dead letters in ``spans`` of ``stream``'s topic partitions, read again from Kafka
    (a batch read of those offsets) and decoded as the stream decodes them (the same message,
    event-time field and ``fields``): the records that fail, with the columns of
    :data:`workbench.streaming.deadletters.COLUMNS`. Decoding is deterministic, so these are the
    letters a tap spilled there, with the same errors."""
    import json

    from pyspark.sql import functions as F

    starts: dict[str, dict[str, int]] = {}  # per topic and partition, the spans' hull
    ends: dict[str, dict[str, int]] = {}
    for span in spans:
        at = str(span.partition)
        start, end = starts.setdefault(span.topic, {}), ends.setdefault(span.topic, {})
        start[at] = min(start.get(at, span.first), span.first)
        end[at] = max(end.get(at, 0), span.last + 1)
    records = sum(ends[t][p] - starts[t][p] for t in starts for p in starts[t])
    options = {
        key: value
        for key, value in reader_options(stream, bootstrap_servers).items()
        if key.startswith("kafka.")
    } | {
        "assign": json.dumps({t: sorted(map(int, ps)) for t, ps in starts.items()}),
        "startingOffsets": json.dumps(starts),
        "endingOffsets": json.dumps(ends),
        "minPartitions": str(max(1, -(-records // REREAD_RECORDS_PER_TASK))),
    }
    raw = spark.read.format("kafka").options(**options).load()
    decoded = decoded_records(spark, raw, stream, registry, fields)
    return decoded.where(F.col("_decoded.error").isNotNull()).select(
        F.lit(stream.table).alias("table"),
        "topic",
        "partition",
        "offset",
        F.col("timestamp").alias("kafka_timestamp"),
        "key",
        "value",
        F.col("_decoded.error").alias("error"),
    )
