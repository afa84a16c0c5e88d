"""The profile's sample categories (benchmarks/engine_profile.py): pure functions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import engine_profile as profile  # noqa: E402

pytestmark = pytest.mark.unit


def test_a_sample_goes_to_the_first_category_from_the_top_frame_down():
    state = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider.put"
    generated = "org.apache.spark.sql.catalyst.expressions.GeneratedClass$Stage1.processNext"
    assert profile.category(["java.util.HashMap.get", state, generated]) == "state store"
    assert profile.category(["java.lang.String.<init>", generated]).startswith("generated")
    assert profile.category(["java.lang.Object.wait"]) == profile.OTHER


def test_the_table_reads_continued_lines_and_spark_prefixes():
    categories = dict(profile.CATEGORIES)
    assert categories["protobuf decode (our JVM decoder)"][-1] == "io.daggerworkbench.udf.Utf8"
    assert "org.apache.spark.serializer." in categories["shuffle and compression"]
    assert len(categories) == len(profile.CATEGORIES)  # no label twice


def test_jfr_durations_read_as_seconds():
    assert profile._seconds("PT0.0125S") == 0.0125
    assert profile._seconds(2_500_000) == 0.0025
    assert profile._seconds("n/a") == 0.0


def test_frames_name_class_and_method_with_dots():
    frame = {"method": {"type": {"name": "java/util/HashMap"}, "name": "get"}}
    assert profile.frame_class(frame) == "java.util.HashMap.get"
