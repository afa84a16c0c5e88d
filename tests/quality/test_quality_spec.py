"""``kind: quality`` specs: their own model; every other spec is a dagger."""

from __future__ import annotations

import pytest

from workbench.exceptions import SpecError
from workbench.kinds import KINDS
from workbench.quality.spec import QualitySpec, shape_hash
from workbench.spec import DaggerSpec
from workbench.spec import parse as parse_dagger

pytestmark = pytest.mark.unit

STREAM = {"topics": ["booking-log"], "message": "esb.booking.BookingLogMessage"}


def test_a_quality_spec_has_defaults():
    spec = KINDS.parse(
        {"kind": "quality", "name": "q", "streams": [STREAM, {**STREAM, "topics": ["b"]}]}
    )
    assert isinstance(spec, QualitySpec)
    assert [s.table for s in spec.streams] == ["records", "records_1"]
    assert spec.streams[0].starting_offsets == "earliest"
    assert (spec.window_ms, spec.allowed_lateness_ms, spec.late_after_ms) == (
        600_000,
        1_800_000,
        60_000,
    )


def test_a_spec_without_kind_is_a_dagger():
    data = {"name": "d", "streams": [{**STREAM, "table": "b"}], "sql": "SELECT 1 FROM b"}
    assert KINDS.of(data).name == "dagger"
    assert isinstance(KINDS.parse(data), DaggerSpec)
    assert isinstance(KINDS.parse({**data, "kind": "dagger"}), DaggerSpec)


def test_unknown_kind_and_keys_are_named():
    with pytest.raises(SpecError, match="unknown kind 'qualty'"):
        KINDS.parse({"kind": "qualty", "name": "q"})
    with pytest.raises(SpecError, match="Did you mean 'window'"):
        KINDS.parse({"kind": "quality", "name": "q", "streams": [STREAM], "windw": "1m"})
    with pytest.raises(SpecError, match="window"):
        KINDS.parse({"kind": "quality", "name": "q", "streams": [STREAM], "window": 0})


def test_a_dagger_parser_refuses_a_quality_spec():
    with pytest.raises(SpecError, match="'quality' spec is not a dagger"):
        parse_dagger({"kind": "quality", "name": "q", "streams": [STREAM]})


def test_shape_hash_ignores_sinks_and_lateness_but_not_the_window():
    base = {"kind": "quality", "name": "q", "streams": [STREAM]}
    first = shape_hash(KINDS.parse(base))
    assert shape_hash(KINDS.parse({**base, "allowed_lateness": "1h", "sinks": []})) == first
    assert shape_hash(KINDS.parse({**base, "window": "5m"})) != first
    assert KINDS.shape_hash(KINDS.parse(base)) == first


def test_alert_rules_name_metric_columns():
    base = {"kind": "quality", "name": "q", "streams": [STREAM]}
    rule = {"name": "low", "when": "score < 95", "group_by": ["tag_topic"]}
    assert KINDS.parse({**base, "alerts": [rule]}).alerts[0].name == "low"
    with pytest.raises(SpecError, match=r"alerts\[0\].when.*Unknown column 'scor'"):
        KINDS.parse({**base, "alerts": [{**rule, "when": "scor < 95"}]})


@pytest.mark.integration
def test_reconciling_a_delta_table_starts_spark_with_delta_lake():
    base = {"kind": "quality", "name": "q", "streams": [STREAM], "spark_conf": {"a": "1"}}
    parquet = KINDS.parse({**base, "reconcile": {"path": "/w"}})
    delta = KINDS.parse({**base, "reconcile": {"path": "/w", "format": "delta"}})
    assert parquet.session_conf() == {"a": "1"}
    conf = delta.session_conf()
    assert conf["a"] == "1" and "DeltaSparkSessionExtension" in conf["spark.sql.extensions"]
    assert "delta-spark" in conf["spark.jars"]
    with pytest.raises(SpecError, match="format"):
        KINDS.parse({**base, "reconcile": {"path": "/w", "format": "iceberg"}})
