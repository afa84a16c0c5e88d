"""Observations: what the metric rules see in a result DataFrame (a micro-batch in the
job, preview or replay rows in test-fire).

A rule's *points* are the distinct values of its ``time`` column (the window) among all
rows; at each point it lists the label sets (``group_by`` values) whose rows satisfy
``when``, with their values (``when``'s and the templates' columns). A point where
nothing matches is listed too, with no label sets, so the state machine sees "false".

All rules are evaluated in one Spark projection per call, without a shuffle: each result
row gives its points, whether each rule's ``when`` holds, its labels and values; the rows
are grouped by (rule, point) in Python. A micro-batch's result rows are few (one per group
updated) and the job has them cached, so this costs one pass over them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from workbench.alerts.rules import check_columns, in_job
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
    metric = in_job(rules)
    if not metric:
        return []
    shape = _Shape(metric)
    points: dict[tuple[int, int], dict[str, dict]] = {}
    for row in shape.projection(df).collect():
        values: dict[str, Any] | None = None
        for index, rule in enumerate(metric):
            at = row[shape.time_slot[index]]
            if at is None:
                continue
            firing = points.setdefault((index, int(at)), {})
            if not row[shape.hit_slot(index)]:
                continue
            values = json.loads(row[-1]) if values is None else values
            labels = {c: row[shape.label_slot[c]] for c in rule.group_by}
            firing[fingerprint(job, rule.name, labels)] = {
                "labels": labels, "values": {c: values.get(c) for c in rule.value_columns},
            }  # fmt: skip
    out = [
        Observation(metric[index].name, at, dict(sorted(firing.items(), key=_by_labels)))
        for (index, at), firing in points.items()
    ]
    return sorted(out, key=lambda o: (o.at, o.rule))


def _by_labels(item: tuple[str, dict]) -> list[tuple[str, str]]:
    return sorted(item[1]["labels"].items())  # one hit per label set at a point


def check(df: DataFrame, rules: Sequence[AlertRule]) -> None:
    """The rules fit ``df``'s columns: names (:func:`~workbench.alerts.rules.check_columns`),
    then each ``when`` analysed by Spark as a boolean; SpecError at ``alerts[i].when``."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    check_columns(rules, df.columns)
    for index, rule in enumerate(rules):
        if not rule.rule_kind.in_job:
            continue
        try:
            kind = df.select(F.expr(rule.when or "")).schema.fields[0].dataType
        except PySparkException as err:
            from workbench.runtime.spark_errors import summary, text_of

            raise SpecError(f"alerts[{index}].when", summary(text_of(err))) from None
        if not isinstance(kind, BooleanType):
            raise SpecError(
                f"alerts[{index}].when",
                f"'{clip(rule.when)}' is a {kind.simpleString()}, not a condition: compare it, "
                "e.g. 'bookings > 300'.",
            )


class _Shape:
    """The columns of the one projection all rules are evaluated with (no shuffle): each
    time column as epoch ms, each rule's ``when`` as a boolean, each ``group_by`` column as
    text, and all value columns as one JSON text (last). Few expressions, so Spark analyses
    it quickly; the grouping by rule and point is done on the collected rows."""

    def __init__(self, rules: Sequence[AlertRule]):
        self.rules = rules
        self.times = list(dict.fromkeys(r.time for r in rules))
        self.time_slot = [self.times.index(r.time) for r in rules]
        self.labels = list(dict.fromkeys(c for r in rules for c in r.group_by))
        start = len(self.times) + len(rules)
        self.label_slot = {c: start + i for i, c in enumerate(self.labels)}
        self.values = list(dict.fromkeys(c for r in rules for c in r.value_columns))

    def hit_slot(self, index: int) -> int:
        return len(self.times) + index

    def projection(self, df: DataFrame) -> DataFrame:
        types = {f.name: f.dataType for f in df.schema.fields}
        return df.selectExpr(
            *(epoch_ms_sql(_col(t), types.get(t)) for t in self.times),
            *(f"coalesce(CAST(({r.when}) AS BOOLEAN), false)" for r in self.rules),
            *(f"coalesce(CAST({_col(c)} AS STRING), '')" for c in self.labels),
            f"to_json({_struct([f'{_lit(c)}, {_col(c)}' for c in self.values])})",
        )


def _col(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _lit(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _struct(fields: list[str]) -> str:
    return f"named_struct({', '.join(fields)})" if fields else "map()"


def epoch_ms_sql(column: str, data_type: DataType | None) -> str:
    """SQL giving a time column as epoch milliseconds (bigint): timestamps, dates, or
    numbers taken as epoch ms already."""
    from pyspark.sql.types import DateType, NumericType

    if isinstance(data_type, NumericType):
        return f"CAST({column} AS BIGINT)"
    if isinstance(data_type, DateType):
        return f"CAST(unix_date({column}) AS BIGINT) * 86400000"
    return f"CAST(floor(unix_micros(CAST({column} AS TIMESTAMP)) / 1000) AS BIGINT)"
