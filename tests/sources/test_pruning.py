"""Which message fields a plan reads (workbench.sources.pruning), on real Spark plans."""

from __future__ import annotations

import json

import pytest
from streaming import surge_spec

from workbench.job import StreamingJob
from workbench.sources.letters import LetterTap
from workbench.sources.pruning import read_fields


@pytest.fixture
def stream(spark):
    """A batch frame shaped as open_stream's: a `_decoded` struct next to Kafka's columns,
    through a dead-letter tap, then flattened."""
    from pyspark.sql import functions as F

    message = F.struct(
        F.col("id").alias("a"), (F.col("id") * 2).alias("b"), F.lit("x").alias("c")
    ).alias("message")
    error = F.when(F.rand() > 0.5, "bad").alias("error")  # nondeterministic, as the decoder
    records = spark.range(3).select(
        F.struct(message, error).alias("_decoded"),
        F.lit("trips").alias("topic"),
        F.lit(0).alias("partition"),
        F.col("id").alias("offset"),
        F.current_timestamp().alias("timestamp"),
        F.lit(None).cast("binary").alias("key"),
        F.lit(None).cast("binary").alias("value"),
    )
    return LetterTap(spark, "trips").keep(records).select("_decoded.message.*")


def test_the_fields_the_query_reads(stream):
    assert read_fields(stream.where("a > 1").select("b")) == {"trips": frozenset({"a", "b"})}
    assert read_fields(stream.groupBy("c").count()) == {"trips": frozenset({"c"})}
    assert read_fields(stream.selectExpr("count(*) AS n")) == {"trips": frozenset()}


def test_every_field_read_is_none(stream):
    assert read_fields(stream) == {"trips": None}
    assert read_fields(stream.selectExpr("struct(*) AS row")) == {"trips": None}


def test_a_plan_without_tapped_streams_reads_nothing_of_them(spark):
    assert read_fields(spark.range(3)) == {}


def decoded_fields(frame) -> list[str]:
    """The message fields of the `_decoded` struct in ``frame``'s analyzed plan."""
    plan = json.loads(frame._jdf.queryExecution().analyzed().toJSON())
    for node in plan:
        for value in node.values():
            for item in value if isinstance(value, list) else []:
                for e in item if isinstance(item, list) else [item]:
                    if isinstance(e, dict) and e.get("name") == "_decoded" and "dataType" in e:
                        fields = e["dataType"]["fields"][0]["type"]["fields"]
                        return sorted(f["name"] for f in fields)
    raise AssertionError("no _decoded column in the plan")


def test_the_surge_dagger_decodes_the_six_fields_it_reads(spark, kafka_broker, tmp_path):
    spec = surge_spec(kafka_broker.bootstrap, "pruning-unused", tmp_path, [])
    job = StreamingJob(spec, spark, checkpoint=tmp_path / "checkpoint")
    (full, _), pruned = job._plan({}), job.plan()
    six = ["customer_id", "event_timestamp", "pickup_lat", "pickup_long", "status", "vehicle_type"]
    assert read_fields(full) == {"booking": frozenset(six)}
    assert decoded_fields(pruned) == six
    assert len(decoded_fields(full)) == 17
    assert pruned.schema == full.schema
