"""A spec's streaming plan over empty inputs, started once: what ``run`` would reject,
rejected before it runs.

Each stream becomes an empty streaming source whose rows have the job's exact schema:
the decoded message plus the Kafka metadata columns, made by the Kafka source's own
:func:`~workbench.sources.kafka.decoded_rows` from Spark's Kafka record schema. The plan
is built as the job builds it (rowtime, watermark, output mode) and started into Spark's
``noop`` sink with ``availableNow``: ``start()`` runs Spark's unsupported-operation
checks, and the one micro-batch (each input holds one record that did not decode, so no
row reaches the SQL) makes Spark plan it, where the rest of its streaming checks run
(joins without an equality, for one). The query then ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import engine
from workbench.exceptions import StreamingPlanError
from workbench.sources.kafka import decoded_rows
from workbench.sql import enums
from workbench.streaming import dedup
from workbench.streams import registry_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.spec import DaggerSpec
    from workbench.streams import ResolvedStream


def output_mode(spec: DaggerSpec) -> str:
    """Spark's output mode for the spec's ``emit``: final windows append, updates update."""
    return "update" if spec.emit == "updates" else "append"


def check(spark: SparkSession, spec: DaggerSpec, resolved: list[ResolvedStream]) -> engine.Plan:
    """The spec's plan as the job streams it; raises :class:`StreamingPlanError` (or a
    :class:`~workbench.exceptions.SqlError`) when Spark would not run it."""
    with tempfile.TemporaryDirectory(prefix="workbench-validate-") as tmp:
        folder = Path(tmp)
        kafka, registry = _kafka_records(spark), registry_for(spec)
        inputs = [
            engine.Input(
                r.spec.table,
                _empty_stream(spark, r, kafka, folder),
                r.spec.event_timestamp_field,
                enums.values_of(registry, r.message),
            )
            for r in resolved
        ]
        plan = engine.build(
            spark,
            spec.sql,
            inputs,
            job=f"validate_{spec.name}",
            rowtime=spec.rowtime_attribute,
            watermark_delay_ms=spec.watermark_delay_ms,
        )
        result = dedup.apply(plan.result, spec.deduplicate, spec.rowtime_attribute)
        _start_once(result, output_mode(spec), folder / "checkpoint")
    return dataclasses.replace(plan, result=result)


def _kafka_records(spark: SparkSession):
    """The schema of Spark's Kafka source records (no broker is contacted)."""
    options = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "validate"}
    return spark.readStream.format("kafka").options(**options).load().schema


def _empty_stream(spark: SparkSession, stream: ResolvedStream, kafka, folder: Path) -> DataFrame:
    """A streaming source of one record that did not decode: a micro-batch runs (so Spark
    plans it) and no row reaches the SQL."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    decoded = StructType(
        [StructField("message", stream.schema), StructField("error", StringType())]
    )
    schema = StructType([StructField("_decoded", decoded), *kafka.fields])
    path = folder / f"input-{len(list(folder.iterdir()))}"
    undecoded = F.struct(F.lit(None).cast(stream.schema).alias("message"), F.lit("validate"))
    spark.range(1).select(
        undecoded.cast(decoded).alias("_decoded"),
        *(F.lit(None).cast(f.dataType).alias(f.name) for f in kafka.fields),
    ).write.parquet(str(path))
    return decoded_rows(spark.readStream.schema(schema).parquet(str(path)))


def _start_once(result: DataFrame, mode: str, checkpoint: Path) -> None:
    with _quiet(result.sparkSession):
        _run_once(result, mode, checkpoint)


def _run_once(result: DataFrame, mode: str, checkpoint: Path) -> None:
    from pyspark.errors import AnalysisException, StreamingQueryException

    try:
        query = (
            result.writeStream.format("noop")
            .outputMode(mode)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination(120)
        finally:
            query.stop()
    except (AnalysisException, StreamingQueryException) as err:
        raise _plan_error(err) from None


#: Loggers that print a failed query's Java stack: the error is reported in one line.
QUIET = ("org.apache.spark.sql.execution.streaming",)


@contextlib.contextmanager
def _quiet(spark: SparkSession) -> Iterator[None]:
    jvm = spark._jvm
    assert jvm is not None, "validate needs a classic (not Spark Connect) session"
    log4j = jvm.org.apache.logging.log4j
    levels = {name: log4j.LogManager.getLogger(name).getLevel() for name in QUIET}
    for name in QUIET:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)
    try:
        yield
    finally:
        for name, level in levels.items():
            log4j.core.config.Configurator.setLevel(name, level)


#: Spark's reason (a fragment of its message) -> what to do about it.
HINTS = {
    "without watermark": "Aggregate by a group window (GROUP BY TUMBLE/HOP/SESSION(rowtime, "
    "...)), or set 'emit: updates' to emit every update of the groups.",
    "without equality predicate": "Join on a key (a = b) or bound one side's rowtime by "
    "the other's with interval literals (s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + "
    "INTERVAL '5' MINUTE).",
    "multiple streaming aggregations": "Spark runs one aggregation per streaming query: "
    "aggregate once, or split the dagger in two.",
}


def _plan_error(err: Exception) -> StreamingPlanError:
    import re

    text = str(getattr(err, "desc", None) or getattr(err, "_message", None) or err)
    reason = re.sub(r"\s*SQLSTATE: \w+\s*$", "", text.strip().splitlines()[0]).rstrip(".;")
    for prefix in (r"^\[[A-Z_.]+\]\s*", r"^Query \[[^\]]*\] terminated with exception:\s*"):
        reason = re.sub(prefix, "", reason)
    hint = next((h for key, h in HINTS.items() if key in reason.lower()), "")
    return StreamingPlanError(reason, hint)
