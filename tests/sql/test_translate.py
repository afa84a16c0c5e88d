"""Translation fixtures: Flink-style SQL in, Spark SQL out; bad SQL points at line/column."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.exceptions import SqlError
from workbench.sql import translate

pytestmark = pytest.mark.unit

CASES = Path(__file__).parent / "cases"
TABLES = ["booking", "payment", "api"]


def _load(name: str) -> list[dict]:
    return yaml.safe_load((CASES / name).read_text())


def _squash(text: str) -> str:
    return " ".join(text.split())


def _typed(case: dict) -> tuple[dict | None, dict | None]:
    """For a case with ``typed: MESSAGE``: the booking stream's Spark schema (with its
    rowtime) and enum fields, as the engine gives them; else (None, the case's enums)."""
    if "typed" not in case:
        return None, case.get("enums")
    from pyspark.sql.types import StructField, TimestampType

    from workbench.schemas import default_registry, spark_schema
    from workbench.sql.enums import values_of

    registry = default_registry()
    schema = spark_schema(registry.descriptor(case["typed"]))
    schema = schema.add(StructField("rowtime", TimestampType()))
    return {"booking": schema}, {"booking": values_of(registry, case["typed"])}


@pytest.mark.parametrize("case", _load("translate.yaml"), ids=lambda c: c["title"])
def test_translation(case):
    views = case.get("views")
    schemas, enums = _typed(case)
    tables = schemas or (list(views) if views else TABLES)
    result = translate(case["sql"], tables, views, enums)
    assert _squash(result.sql) == _squash(case["spark"])


@pytest.mark.parametrize("case", _load("errors.yaml"), ids=lambda c: c["title"])
def test_errors_point_at_the_fault(case):
    schemas, enums = _typed(case)
    with pytest.raises(SqlError) as info:
        translate(case["sql"], schemas or ["booking", "payment"], None, enums)
    err = info.value
    assert case["error"] in str(err)
    if "line" in case:
        assert (err.line, err.column) == (case["line"], case["column"])
        assert f"Line {case['line']}, Col: {case['column']}." in str(err)


def test_error_message_underlines_the_fault():
    with pytest.raises(SqlError) as info:
        translate("SELECT status\nFROM bookings", ["booking"])
    assert str(info.value).splitlines()[-2:] == ["  FROM bookings", "       ^^^^^^^^"]


def test_tables_used_are_reported_in_order():
    sql = "SELECT * FROM payment p JOIN booking b ON p.order_number = b.order_number"
    assert translate(sql, TABLES).tables == ["payment", "booking"]
