"""Observations: what the metric rules see in a result DataFrame (a micro-batch in the
job, preview or replay rows in test-fire).

A rule's *points* are the distinct values of its ``time`` column (the window) among all
rows; at each point it lists the label sets (``group_by`` values) whose rows satisfy
``when``, with their values (``when``'s and the templates' columns). A point where
nothing matches is listed too, with no label sets, so the state machine sees "false".

All rules are evaluated in one Spark job per call: each row becomes one entry per rule
(time, condition, labels and values as JSON), grouped by (rule, point).
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
    from pyspark.sql import Column, DataFrame
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
    for row in _points(df, metric).collect():
        rule = metric[row["r"]]
        firing: dict[str, dict] = {}
        for hit in sorted(row["hits"], key=lambda h: (h["labels"], h["values"])):
            labels = json.loads(hit["labels"])
            firing[fingerprint(job, rule.name, labels)] = {
                "labels": labels,
                "values": json.loads(hit["values"]),
            }
        out.append(Observation(rule.name, int(row["at"]), firing))
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
    """(r: rule index, at, hits: [{labels, values}]) per rule and point: one query."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in df.schema.fields}
    entries = [_entry(i, rule, types) for i, rule in enumerate(rules)]
    rows = df.select(F.explode(F.array(*entries)).alias("e")).select("e.*")
    hit = F.when(F.col("hit"), F.struct("labels", "values"))
    return (
        rows.where(F.col("at").isNotNull())
        .groupBy("r", "at")
        .agg(F.collect_list(hit).alias("hits"))
    )


def _entry(index: int, rule: AlertRule, types: dict[str, DataType]) -> Column:
    from pyspark.sql import functions as F

    hit = F.coalesce(F.expr(rule.when or "false").cast("boolean"), F.lit(False))
    labels = [F.coalesce(_col(c).cast("string"), F.lit("")).alias(c) for c in rule.group_by]
    values = [_col(c).alias(c) for c in rule.value_columns]
    return F.struct(
        F.lit(index).alias("r"),
        epoch_ms(_col(rule.time), types.get(rule.time)).alias("at"),
        hit.alias("hit"),
        F.when(hit, _json(labels)).alias("labels"),
        F.when(hit, _json(values)).alias("values"),
    )


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(f"`{name.replace('`', '``')}`")


def _json(columns: list[Column]) -> Column:
    from pyspark.sql import functions as F

    return F.to_json(F.struct(*columns)) if columns else F.lit("{}")


def epoch_ms(column: Column, data_type: DataType | None) -> Column:
    """A time column as epoch milliseconds (long): timestamps, dates, or numbers taken
    as epoch ms already."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DateType, NumericType

    if isinstance(data_type, NumericType):
        return column.cast("long")
    if isinstance(data_type, DateType):
        return F.unix_date(column).cast("long") * 86_400_000
    return F.floor(F.unix_micros(column.cast("timestamp")) / 1000).cast("long")
