"""``workbench validate``: everything that can be checked without running the job.

The spec's keys, its messages and event-time fields, and its SQL: parsed, translated
and analysed by Spark over empty inputs with the messages' exact schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench import dedup, engine, streams
from workbench.spec import DaggerSpec, load


@dataclass
class ValidationReport:
    spec: DaggerSpec
    resolved: list[streams.ResolvedStream]
    spark_sql: str
    output: Any  # StructType of the result rows

    def render(self, show_sql: bool = False) -> str:
        lines = [f"ok: dagger '{self.spec.name}' (team {self.spec.team})"]
        for r in self.resolved:
            topics = ", ".join(r.spec.topics or []) or f"/{r.spec.topic_pattern}/"
            lines.append(
                f"  stream {r.spec.table}: {r.message} from {topics} "
                f"(event time: {r.spec.event_timestamp_field})"
            )
        lines.append(
            "  output columns: "
            + ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in self.output.fields)
        )
        sinks = ", ".join(s.type for s in self.spec.sinks) or "(none)"
        lines.append(
            f"  sinks: {sinks}; emit: {self.spec.emit}; "
            f"watermark delay: {self.spec.watermark_delay}"
        )
        if show_sql:
            lines.append(f"  spark sql: {self.spark_sql}")
        return "\n".join(lines)


def check(spec: DaggerSpec) -> ValidationReport:
    from workbench.spark import session

    resolved = streams.resolve(spec)
    spark = session()
    inputs = [
        engine.Input(
            r.spec.table, spark.createDataFrame([], r.schema), r.spec.event_timestamp_field
        )
        for r in resolved
    ]
    plan = engine.build(
        spark, spec.sql, inputs, job=f"validate_{spec.name}", rowtime=spec.rowtime_attribute
    )
    result = dedup.apply(plan.result, spec.deduplicate, spec.rowtime_attribute)
    return ValidationReport(spec, resolved, plan.translation.sql, result.schema)


def validate(path: str | Path) -> ValidationReport:
    return check(load(path))
