"""``kind: quality`` specs: their own model; every other spec is a dagger."""

from __future__ import annotations

import pytest

from workbench.exceptions import SpecError
from workbench.quality.spec import QualitySpec, kind_of, parse
from workbench.spec import DaggerSpec

STREAM = {"topics": ["booking-log"], "message": "esb.booking.BookingLogMessage"}


def test_a_quality_spec_has_defaults():
    spec = parse({"kind": "quality", "name": "q", "streams": [STREAM, {**STREAM, "topics": ["b"]}]})
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
    assert kind_of(data) == "dagger"
    assert isinstance(parse(data), DaggerSpec)
    assert isinstance(parse({**data, "kind": "dagger"}), DaggerSpec)


def test_unknown_kind_and_keys_are_named():
    with pytest.raises(SpecError, match="unknown kind 'qualty'"):
        parse({"kind": "qualty", "name": "q"})
    with pytest.raises(SpecError, match="Did you mean 'window'"):
        parse({"kind": "quality", "name": "q", "streams": [STREAM], "windw": "1m"})
    with pytest.raises(SpecError, match="window"):
        parse({"kind": "quality", "name": "q", "streams": [STREAM], "window": 0})
