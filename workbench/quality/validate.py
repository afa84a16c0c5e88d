"""``workbench validate`` of a ``kind: quality`` spec: everything checked without running it.

The spec's keys (and its alert rules' columns, the metric rows' columns) when it is parsed;
then each stream's message and event-time field (:func:`workbench.streams.resolve`), the
``business_key`` in every stream's message, each sink against the metric rows' schema, and
``reconcile``'s columns in the warehouse when it already holds Parquet files (read with
pyarrow: no Spark starts). Each problem is a :class:`~workbench.exceptions.SpecError`
naming its key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import streams
from workbench.exceptions import SinkError, SpecError, UnknownNameError
from workbench.quality import metrics

if TYPE_CHECKING:
    from workbench.quality.spec import QualitySpec, ReconcileSpec


@dataclass
class QualityReport:
    spec: QualitySpec
    resolved: list[streams.ResolvedStream]
    warehouse: str  # what reconcile found ("" without reconcile)

    def render(self, show_sql: bool = False) -> str:  # show_sql: a quality spec has none
        spec = self.spec
        from workbench.streaming.validate import stream_lines

        lines = [f"ok: quality job '{spec.name}' (team {spec.team})", *stream_lines(self.resolved)]
        lines.append(
            f"  window: {spec.window}; allowed lateness: {spec.allowed_lateness}; "
            f"late after: {spec.late_after}; business key: {spec.business_key or '(none)'}"
        )
        if spec.alerts:
            lines.append("  alerts: " + ", ".join(f"{a.name} ({a.kind})" for a in spec.alerts))
        lines.append("  sinks: " + (", ".join(s.type for s in spec.sinks) or "(log)"))
        if self.warehouse:
            lines.append(f"  reconcile: {self.warehouse}")
        return "\n".join(lines)


def check(spec: QualitySpec) -> QualityReport:

    resolved = streams.resolve(spec)  # type: ignore[arg-type]
    if spec.business_key:
        for index, stream in enumerate(resolved):
            _has_field(stream, spec.business_key, index)
    schema = metrics.schema()
    for index, sink in enumerate(spec.sinks):
        try:
            sink.check(schema)
        except SinkError as err:
            raise SpecError(f"sinks[{index}]", str(err)) from None
    warehouse = _warehouse(spec.reconcile) if spec.reconcile else ""
    return QualityReport(spec, resolved, warehouse)


def _has_field(stream: streams.ResolvedStream, dotted: str, index: int) -> None:
    """``dotted`` (``a.b``) names a field of the stream's message."""
    from pyspark.sql.types import StructType

    kind: Any = stream.schema
    for part in dotted.split("."):
        names = kind.fieldNames() if isinstance(kind, StructType) else []
        if part not in names:
            known = UnknownNameError("field", part, names, f"in {stream.message}")
            raise SpecError("business_key", f"{known} (the message of streams[{index}])")
        kind = kind[part].dataType


def _warehouse(reconcile: ReconcileSpec) -> str:
    """The warehouse's columns checked (when it holds Parquet files yet)."""
    folder = Path(reconcile.path)
    if not folder.is_dir() or not any(folder.rglob("*.parquet")):
        return f"{reconcile.path} holds no Parquet files yet (its columns are not checked)"
    import pyarrow.dataset as ds

    names = ds.dataset(str(folder), format="parquet", partitioning="hive").schema.names
    for key in ("time_column", "count_column"):
        column = getattr(reconcile, key)
        if column is not None and column not in names:
            known = UnknownNameError("column", column, names, f"in {reconcile.path}")
            raise SpecError(f"reconcile.{key}", str(known))
    return f"{reconcile.path} (columns {reconcile.time_column}, {reconcile.count_column or 'rows'})"
