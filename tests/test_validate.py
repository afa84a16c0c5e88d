"""``workbench validate``'s checks, in the test session's Spark (tests/test_cli.py runs the
command itself and how it prints an error)."""

from __future__ import annotations

import pytest
from specfiles import spec_file

from workbench.exceptions import SpecError, StreamingPlanError
from workbench.streaming.validate import validate


@pytest.fixture(autouse=True)
def _session(spark):
    """validate() plans in the running session, as the CLI does in its own."""


def columns(report) -> str:
    return ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in report.output.fields)


def test_a_time_only_interval_join_is_accepted(tmp_path):
    sql = (
        "SELECT s0.order_number, s1.order_number AS next_order FROM s0 JOIN s1 "
        "ON s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + INTERVAL '5' MINUTE"
    )
    assert columns(validate(spec_file(tmp_path, sql))) == "order_number string, next_order string"


def test_an_unwindowed_aggregation_needs_emit_updates(tmp_path):
    unwindowed = "SELECT status, count(*) AS n FROM s0 GROUP BY status"
    with pytest.raises(StreamingPlanError) as err:
        validate(spec_file(tmp_path, unwindowed))
    assert "emit: updates" in str(err.value)
    assert columns(validate(spec_file(tmp_path, unwindowed, emit="updates"))) == (
        "status string, n bigint"
    )


def test_select_star_lists_the_kafka_columns_run_adds(tmp_path):
    rendered = validate(spec_file(tmp_path, "SELECT * FROM s0")).render()
    assert (
        "metadata map<string,string>, kafka_topic string, kafka_partition int, "
        "kafka_offset bigint, kafka_timestamp timestamp, rowtime timestamp\n"
    ) in rendered


def test_unicode_aliases_are_accepted(tmp_path):
    sql = "SELECT order_number AS nomor_ä, amount AS сумма FROM s0"
    assert columns(validate(spec_file(tmp_path, sql))) == "nomor_ä string, сумма double"


@pytest.mark.parametrize(
    ("sink", "message"),
    [
        ({"type": "parquet"}, "no column 'window_timestamp'"),
        (
            {"type": "parquet", "time_column": "tag_order"},
            "time_column 'tag_order' is a string, not a timestamp",
        ),
        (
            {"type": "influx", "measurement": "m", "bucket": "b", "time_column": "booked"},
            "a point needs at least one field",
        ),
        ({"type": "kafka", "topic": "t", "key_columns": ["order"]}, "key_columns order are not"),
    ],
)
def test_each_sink_checks_it_takes_the_query_columns(tmp_path, sink, message):
    sql = "SELECT order_number AS tag_order, rowtime AS booked FROM s0"
    if sink["type"] == "parquet":
        sink = {**sink, "path": str(tmp_path / "out")}
    with pytest.raises(SpecError) as err:
        validate(spec_file(tmp_path, sql, [sink]))
    assert err.value.key == "sinks[0]" and message in str(err.value)


def test_a_sink_with_a_timestamp_time_column_is_accepted(tmp_path):
    sql = "SELECT order_number AS tag_order, rowtime AS booked FROM s0"
    good = {"type": "parquet", "path": str(tmp_path / "out"), "time_column": "booked"}
    assert columns(validate(spec_file(tmp_path, sql, [good]))) == (
        "tag_order string, booked timestamp"
    )
