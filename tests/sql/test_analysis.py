"""Spark's analysis errors as the user sees them: one line at the fault, suggestions from
the user's columns only (not the window structs or join buckets the translation adds)."""

from __future__ import annotations

import pytest

from workbench import engine
from workbench.exceptions import SqlError
from workbench.schemas import default_registry, spark_schema
from workbench.sql.joins import HELPER_PREFIX


@pytest.fixture(scope="module")
def booking(spark):
    schema = spark_schema(default_registry().descriptor("BookingLogMessage"))
    return spark.createDataFrame([], schema)


@pytest.mark.parametrize(
    "sql, name",
    [
        (
            "SELECT windw, count(*) AS n FROM booking "
            "GROUP BY TUMBLE(rowtime, INTERVAL '1' MINUTE)",
            "windw",
        ),
        (
            "SELECT s0.rowtme FROM booking AS s0 JOIN booking AS s1 "
            "ON s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + INTERVAL '1' MINUTE",
            "rowtme",
        ),
    ],
)
def test_suggestions_leave_out_internal_columns(sql, name, spark, booking, capfd):
    with pytest.raises(SqlError) as info:
        engine.build(spark, sql, [engine.Input("booking", booking)])
    message = str(info.value)
    assert message.startswith(f"Unknown column '{name}'.")
    assert "window" not in message.split(". Line")[0] and HELPER_PREFIX not in message
    assert "rowtime" in message
    assert "SQLQueryContextLogger" not in capfd.readouterr().err  # no JVM stack on stderr


def test_enum_value_outside_the_enum_is_refused_where_it_is_written(spark, booking):
    statuses = default_registry().fields("BookingLogMessage")
    enums = {f.name: f.enum_values for f in statuses if f.kind == "enum"}
    sql = "SELECT order_number FROM booking WHERE status = 'COMPLETE'"
    with pytest.raises(SqlError) as info:
        engine.build(spark, sql, [engine.Input("booking", booking, enums=enums)])
    assert (info.value.line, info.value.column) == (1, 49)
    assert "Did you mean COMPLETED?" in str(info.value)
    ok = "SELECT order_number FROM booking WHERE status = 'COMPLETED'"
    engine.build(spark, ok, [engine.Input("booking", booking, enums=enums)])
