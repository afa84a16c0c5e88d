"""The Flink anchor's SQL script (benchmarks/flink_sql.py): the table Flink's protobuf format
reads, the spec's SQL unchanged, the options that make the Kafka source end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import flink_sql  # noqa: E402
from flink_cluster import epoch_ms  # noqa: E402

from workbench.dev.demo import spec_path  # noqa: E402
from workbench.schemas.registry import default_registry  # noqa: E402

pytestmark = pytest.mark.unit

MESSAGE = "esb.booking.BookingLogMessage"


def booking():
    return default_registry().descriptor(MESSAGE)


def test_columns_follow_the_descriptor_as_flink_protobuf_maps_it():
    assert flink_sql.columns(booking()) == [
        "`order_number` STRING",
        "`order_url` STRING",
        "`service_type` STRING",
        "`status` STRING",
        "`customer_id` STRING",
        "`driver_id` STRING",
        "`pickup_lat` DOUBLE",
        "`pickup_long` DOUBLE",
        "`dropoff_lat` DOUBLE",
        "`dropoff_long` DOUBLE",
        "`service_area_id` INT",
        "`vehicle_type` STRING",
        "`amount` DOUBLE",
        "`currency` STRING",
        "`items` ARRAY<ROW<`id` STRING, `quantity` INT, `name` STRING>>",
        "`event_timestamp` ROW<`seconds` BIGINT, `nanos` INT>",
        "`metadata` MAP<STRING, STRING>",
    ]


def test_the_script_runs_the_spec_sql_unchanged_on_a_bounded_protobuf_kafka_table():
    spec = yaml.safe_load(spec_path().read_text())
    spec["streams"][0] |= {"topics": ["t1"], "bootstrap_servers": "127.0.0.1:9"}
    text = flink_sql.script(spec, booking(), "/tmp/out")
    statements = [s.strip() for s in text.split(";\n") if s.strip()]
    assert [s.split("(")[0].split(" AS ")[0] for s in statements[:4]] == [
        "CREATE TEMPORARY FUNCTION S2Id",
        "CREATE TEMPORARY FUNCTION DistinctCount",
        "CREATE TABLE `booking` ",
        "CREATE TABLE `surge_out` ",
    ]
    assert statements[4] == "INSERT INTO `surge_out`\n" + spec["sql"].strip()
    for option in (
        "'topic' = 't1'",
        "'properties.bootstrap.servers' = '127.0.0.1:9'",
        "'scan.startup.mode' = 'earliest-offset'",
        "'scan.bounded.mode' = 'latest-offset'",
        "'format' = 'protobuf'",
        "'protobuf.message-class-name' = 'com.example.esb.booking.BookingLogMessage'",
        "WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '10' SECOND",
    ):
        assert option in statements[2]


def test_durations_and_flink_csv_timestamps():
    assert [flink_sql.seconds(d) for d in ("10s", "2m", "1h")] == [10, 120, 3600]
    assert epoch_ms("2026-11-24 12:58:00Z") == 1795525080000
    assert epoch_ms("2026-11-24 12:58:00.250Z") == 1795525080250
