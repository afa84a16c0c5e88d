"""``workbench validate``: everything that can be checked without running the job.

The spec's keys, its messages and event-time fields, and its SQL: parsed, translated,
and planned and started as the job streams it, over empty inputs with the job's exact
row schemas (:mod:`workbench.streaming.dry_run`); then each sink checks it can take the query's
columns (:meth:`~workbench.sinks.registry.SinkConfig.check`), and the alert rules'
``when``, ``group_by``, ``time`` and templates name result columns, each ``when`` a
boolean (:func:`workbench.alerts.observe.check`). A ``kind: quality`` spec is checked by
:mod:`workbench.quality.validate` (the spec's kind picks the check: :mod:`workbench.kinds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import streams
from workbench.alerts import observe as alerts
from workbench.exceptions import SinkError, SpecError
from workbench.kinds import KINDS
from workbench.runtime.spark import session, short_lived_conf
from workbench.spec import DaggerSpec, located
from workbench.sql import enums, translate
from workbench.streaming import dry_run

if TYPE_CHECKING:
    from workbench.schemas import SchemaRegistry


@dataclass
class ValidationReport:
    spec: DaggerSpec
    resolved: list[streams.ResolvedStream]
    spark_sql: str
    output: Any  # StructType of the result rows

    def render(self, show_sql: bool = False) -> str:
        lines = [f"ok: dagger '{self.spec.name}' (team {self.spec.team})"]
        lines += stream_lines(self.resolved)
        lines.append(
            "  output columns: "
            + ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in self.output.fields)
        )
        if self.spec.alerts:
            rules = ", ".join(f"{a.name} ({a.kind})" for a in self.spec.alerts)
            lines.append(f"  alerts: {rules}")
        sinks = ", ".join(s.type for s in self.spec.sinks) or "(none)"
        lines.append(
            f"  sinks: {sinks}; emit: {self.spec.emit}; "
            f"watermark delay: {self.spec.watermark_delay}"
        )
        if show_sql:
            lines.append(f"  spark sql: {self.spark_sql}")
        return "\n".join(lines)


def stream_lines(resolved: list[streams.ResolvedStream]) -> list[str]:
    """A report's line per stream: its table, message, topics and event-time field."""
    lines = []
    for r in resolved:
        topics = ", ".join(r.spec.topics or []) or f"/{r.spec.topic_pattern}/"
        lines.append(
            f"  stream {r.spec.table}: {r.message} from {topics} "
            f"(event time: {r.spec.event_timestamp_field})"
        )
    return lines


def check_names(
    spec: DaggerSpec, registry: SchemaRegistry, before: SchemaRegistry | None = None
) -> list[streams.ResolvedStream]:
    """What ``registry`` decides without Spark: the streams' messages and event-time
    fields, the SQL and the enum values it compares with; given the set the job runs on
    today (``before``), the SQL's columns that set has and ``registry`` lacks
    (:mod:`workbench.schemas.fit`). The job service checks each new version with it."""
    resolved = streams.resolve(spec, registry)
    translate(
        spec.sql,
        {r.spec.table: r.schema for r in resolved},
        enum_fields={r.spec.table: enums.values_of(registry, r.message) for r in resolved},
    )
    if before is not None:
        from workbench.schemas import fit

        fit.check(spec, before, registry)
    return resolved


def check(spec: DaggerSpec) -> ValidationReport:

    resolved = check_names(spec, streams.registry_for(spec))  # before Spark starts
    plan = dry_run.check(session(conf=short_lived_conf()), spec, resolved)
    schema = plan.result.schema
    for index, sink in enumerate(spec.sinks):
        try:
            sink.check(schema)
        except SinkError as err:
            raise SpecError(f"sinks[{index}]", str(err)) from None
    alerts.check(plan.result, spec.alerts)
    return ValidationReport(spec, resolved, plan.translation.sql, schema)


def validate(path: str | Path) -> Any:
    """The report of the spec at ``path``, of any kind (:meth:`workbench.kinds.Kinds.check`:
    a dagger's is a :class:`ValidationReport`, a quality spec's a
    :class:`~workbench.quality.validate.QualityReport`); a SpecError names the key and the
    line of ``path`` where its value starts."""

    spec = KINDS.load(path)
    try:
        return KINDS.check(spec)
    except SpecError as err:  # messages, sinks, alert rules' columns: checked only now
        if err.source:
            raise
        raise located(err, path) from None
