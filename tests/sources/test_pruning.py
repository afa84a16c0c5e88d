"""Which message fields a plan reads (workbench.sources.pruning), on real Spark plans."""

from __future__ import annotations

import json

import pytest
from streaming import surge_spec

from workbench.sources.letters import LetterTap
from workbench.sources.pruning import read_fields
from workbench.streaming.job import StreamingJob

pytestmark = pytest.mark.unit


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


def test_a_second_start_of_the_same_dagger_plans_once_with_the_fields_kept(
    spark, kafka_broker, tmp_path, monkeypatch
):
    from workbench.sources import pruning

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    spec = surge_spec(kafka_broker.bootstrap, "pruning-once", tmp_path, [])
    first = StreamingJob(spec, spark, checkpoint=tmp_path / "checkpoint").plan()
    assert len(list((tmp_path / "home" / "plans").glob("*.json"))) == 1
    planned: list[dict] = []
    real_plan = StreamingJob._plan

    def counted(job, fields):
        planned.append(fields)
        return real_plan(job, fields)

    monkeypatch.setattr(StreamingJob, "_plan", counted)
    monkeypatch.setattr(pruning, "read_fields", lambda result: pytest.fail("planned twice"))
    again = spec.model_copy(update={"name": "surge-elsewhere", "sinks": []})  # where, not what
    second = StreamingJob(again, spark, checkpoint=tmp_path / "other").plan()
    six = ["customer_id", "event_timestamp", "pickup_lat", "pickup_long", "status", "vehicle_type"]
    assert [sorted(f["booking"]) for f in planned] == [six]  # one plan, pruned
    assert decoded_fields(second) == six and second.schema == first.schema


def test_what_a_dagger_computes_is_in_its_plan_key_and_where_it_runs_is_not(tmp_path):
    from workbench.sources.pruning import plan_key

    spec = surge_spec("127.0.0.1:9092", "in", tmp_path, [])
    key = plan_key(spec, "descriptors")
    moved = spec.model_copy(
        update={
            "name": "elsewhere",
            "checkpoint": str(tmp_path / "other"),
            "streams": [spec.streams[0].model_copy(update={"topics": ["other"]})],
        }
    )
    assert plan_key(moved, "descriptors") == key
    assert plan_key(spec, "other descriptors") != key
    assert plan_key(spec, "descriptors", True) != key  # e.g. a handoff's rowtime floor
    assert plan_key(spec.model_copy(update={"sql": spec.sql + " "}), "descriptors") != key
    assert plan_key(spec.model_copy(update={"watermark_delay": "20s"}), "descriptors") != key


def test_kept_fields_round_trip_and_a_broken_file_is_no_answer(tmp_path, monkeypatch):
    from workbench.sources.pruning import _known_path, known_fields, remember

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    assert known_fields("k") is None
    remember("k", {"booking": frozenset({"a", "b"}), "pings": None}, '{"type":"struct"}')
    assert known_fields("k") == (
        {"booking": frozenset({"a", "b"}), "pings": None},
        '{"type":"struct"}',
    )
    _known_path("k").write_text("{not json")
    assert known_fields("k") is None
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "a-file" / "home"))  # cannot be made
    remember("k", {}, "{}")  # nothing kept, and the job's start goes on
    assert known_fields("k") is None
