"""spec or SQL + input frames → the Spark plan. One builder for preview, replay and production.

Each input gets its rowtime attribute (and, when streaming, its watermark), is
registered as a temp view under a name private to the plan, and the translated SQL
runs over those views.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.durations import spark_interval
from workbench.rowtime import with_rowtime
from workbench.runtime.jvm_log import hush_pyspark_loggers
from workbench.sql import Translation, translate
from workbench.sql.analysis import to_sql_error

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class Input:
    table: str
    frame: DataFrame
    event_time_field: str = "event_timestamp"
    #: enum field (lower case) -> value names, so SQL comparing one with another value fails
    enums: Mapping[str, Sequence[str]] | None = None


@dataclass(frozen=True)
class Plan:
    translation: Translation
    result: DataFrame
    inputs: dict[str, DataFrame]

    def columns(self) -> list[str]:
        """The input streams' columns (for "did you mean")."""
        return [c for frame in self.inputs.values() for c in frame.columns]


def view_name(job: str, table: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{table}__{job}")


def build(
    spark: SparkSession,
    sql: str,
    inputs: list[Input],
    *,
    job: str = "adhoc",
    rowtime: str = "rowtime",
    watermark_delay_ms: int | None = None,
) -> Plan:
    """Register ``inputs`` and plan ``sql`` over them (analysis only; nothing runs yet).

    ``watermark_delay_ms`` sets the event-time watermark on streaming inputs.
    """
    from pyspark.errors import AnalysisException

    frames, views = {}, {}
    for item in inputs:
        frame = with_rowtime(item.frame, item.event_time_field, rowtime)
        if frame.isStreaming and watermark_delay_ms is not None:
            frame = frame.withWatermark(rowtime, spark_interval(watermark_delay_ms))
        views[item.table] = view_name(job, item.table)
        frame.createOrReplaceTempView(views[item.table])
        frames[item.table] = frame
    enum_fields = {item.table: item.enums for item in inputs if item.enums}
    translation = translate(sql, {t: f.schema for t, f in frames.items()}, views, enum_fields)
    hush_pyspark_loggers()
    try:
        result = spark.sql(translation.sql)
    except AnalysisException as err:
        columns = [c for frame in frames.values() for c in frame.columns]
        raise to_sql_error(err, sql, views, columns) from None
    return Plan(translation, result, frames)


@contextmanager
def reported(plan: Plan) -> Iterator[None]:
    """Spark's errors while ``plan`` runs (text that does not cast to a number, a division
    by zero) as a :class:`~workbench.exceptions.SqlError` at the user's SQL, not a Java
    stack."""
    from pyspark.errors.exceptions.captured import CapturedException

    try:
        yield
    except CapturedException as err:
        translation = plan.translation
        raise to_sql_error(err, translation.source, translation.views, plan.columns()) from None
