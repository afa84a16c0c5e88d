"""Observations: what the metric rules see in a result DataFrame (a micro-batch in the
job, preview or replay rows in test-fire).

A rule's *points* are the distinct values of its ``time`` column (the window) among all
rows; at each point it lists the label sets (``group_by`` values) whose rows satisfy
``when``, with their values (``when``'s and the templates' columns). A point where
nothing matches is listed too, with no label sets, so the state machine sees "false".

All rules are evaluated in one Spark query per call: each row becomes one entry per rule
(time, condition, labels and values as JSON), grouped by (rule, point), each point's
matches collected as one JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from workbench.alerts.rules import check_columns
from workbench.alerts.state import fingerprint
from workbench.exceptions import SpecError, clip

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

    from workbench.alerts.rules import AlertRule


@dataclass(frozen=True)
class Observation:
    """One metric rule at one evaluation point (window)."""

    rule: str
    at: int  # epoch ms of the ``time`` column's value
    firing: dict[str, dict]  # fingerprint -> {"labels": {k: str}, "values": {col: value}}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def observe(df: DataFrame, rules: Sequence[AlertRule], job: str) -> list[Observation]:
    """The observations of ``rules``' metric rules over ``df``, sorted by (at, rule);
    fingerprints are :func:`~workbench.alerts.state.fingerprint` of ``job``."""
    metric = [r for r in rules if r.kind == "metric"]
    if not metric:
        return []
    out = []
    for index, at, hits in _points(df, metric).collect():
        rule = metric[index]
        firing: dict[str, dict] = {}
        for hit in sorted(json.loads(hits), key=lambda h: (h["l"], h["v"])):
            labels = json.loads(hit["l"])
            firing[fingerprint(job, rule.name, labels)] = {
                "labels": labels,
                "values": json.loads(hit["v"]),
            }
        out.append(Observation(rule.name, int(at), firing))
    return sorted(out, key=lambda o: (o.at, o.rule))


def check(df: DataFrame, rules: Sequence[AlertRule]) -> None:
    """The rules fit ``df``'s columns: names (:func:`~workbench.alerts.rules.check_columns`),
    then each ``when`` analysed by Spark as a boolean; SpecError at ``alerts[i].when``."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    check_columns(rules, df.columns)
    for index, rule in enumerate(rules):
        if rule.kind != "metric":
            continue
        try:
            kind = df.select(F.expr(rule.when or "")).schema.fields[0].dataType
        except PySparkException as err:
            from workbench.spark_errors import summary, text_of

            raise SpecError(f"alerts[{index}].when", summary(text_of(err))) from None
        if not isinstance(kind, BooleanType):
            raise SpecError(
                f"alerts[{index}].when",
                f"'{clip(rule.when)}' is a {kind.simpleString()}, not a condition: compare it, "
                "e.g. 'bookings > 300'.",
            )


def _points(df: DataFrame, rules: Sequence[AlertRule]) -> DataFrame:
    """(r: rule index, at, hits: JSON [{l: labels JSON, v: values JSON}]) per rule and point:
    one query, written as SQL text so that building it costs a few calls into the JVM."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in df.schema.fields}
    entries = ", ".join(_entry(i, rule, types) for i, rule in enumerate(rules))
    hits = "to_json(collect_list(CASE WHEN hit THEN named_struct('l', labels, 'v', vals) END))"
    return (
        df.selectExpr(f"inline(array({entries}))")
        .where("at IS NOT NULL")
        .groupBy("r", "at")
        .agg(F.expr(hits).alias("hits"))
    )


def _entry(index: int, rule: AlertRule, types: dict[str, DataType]) -> str:
    """One rule's struct for a row: index, point, whether ``when`` holds, labels and values."""
    hit = f"coalesce(CAST(({rule.when}) AS BOOLEAN), false)"
    labels = [f"{_lit(c)}, coalesce(CAST({_col(c)} AS STRING), '')" for c in rule.group_by]
    values = [f"{_lit(c)}, {_col(c)}" for c in rule.value_columns]
    return (
        f"named_struct('r', {index}, 'at', {epoch_ms(_col(rule.time), types.get(rule.time))}, "
        f"'hit', {hit}, 'labels', CASE WHEN {hit} THEN {_json(labels)} END, "
        f"'vals', CASE WHEN {hit} THEN {_json(values)} END)"
    )


def _col(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _lit(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _json(fields: list[str]) -> str:
    return f"to_json(named_struct({', '.join(fields)}))" if fields else "'{}'"


def epoch_ms(column: str, data_type: DataType | None) -> str:
    """SQL giving a time column as epoch milliseconds (bigint): timestamps, dates, or
    numbers taken as epoch ms already."""
    from pyspark.sql.types import DateType, NumericType

    if isinstance(data_type, NumericType):
        return f"CAST({column} AS BIGINT)"
    if isinstance(data_type, DateType):
        return f"CAST(unix_date({column}) AS BIGINT) * 86400000"
    return f"CAST(floor(unix_micros(CAST({column} AS TIMESTAMP)) / 1000) AS BIGINT)"
