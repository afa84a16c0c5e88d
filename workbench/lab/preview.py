"""Preview: dagger SQL over samples, as a batch, through the production translation and plan.

:func:`preview` takes a spec (or bare dagger SQL) and samples by table
(``{"booking": Sample}``, see :mod:`workbench.lab.sampling`), plans the SQL with
:func:`workbench.engine.build` over the samples' decoded frames (the job's decoder, cached
per sample) and collects the result through Arrow into pandas. Like ``workbench replay``,
a batch computes every window over the whole sample, as if the stream ended there; its rows
equal ``workbench replay --sample`` over the same offsets.

The :class:`Preview` it returns holds:

* ``rows``: the result (pandas), ordered by window (its timestamp columns), then the
  query's group keys, then the other columns (:func:`collect`);
* ``counts``: ``records`` sampled, ``decoded``, ``undecodable`` (what the job would send to
  its dead letters), ``late`` and ``rows``; ``by_table`` has the same per sample;
* ``spark_sql`` (the translation), ``sql``, ``elapsed_s`` (planning to collected rows);
* ``chart(metric)``: a per-window time series of one result column (matplotlib),
  ``alerts()``: the spec's alert rules test-fired over the rows
  (:mod:`workbench.alerts.testfire`), and ``_repr_html_()``: the results table with the
  counts, the Spark SQL and the offsets.

``late`` counts the sample records the streaming job would drop as late: in arrival order
(Kafka timestamp; records stamped alike arrived together), those whose last window had
already closed, its end at or before the watermark (the latest event time that arrived
before them minus the watermark delay); see :mod:`workbench.streaming.lateness`. The job moves its
watermark only between micro-batches, so it drops at most that many. The preview's rows
keep late records (as replay does); the count says how far production may differ.

``emit`` and ``watermark`` override the spec's for this preview (``Preview.spec`` is the
spec with them, for :mod:`workbench.notebook.live`); a batch has no open windows, so
``emit`` does not change the rows.
"""

from __future__ import annotations

import html
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench import engine
from workbench.alerts.testfire import evaluate, rules_of
from workbench.durations import to_millis
from workbench.exceptions import UnknownNameError, WorkbenchError
from workbench.lab.results import sortable
from workbench.lab.sampling import Sample
from workbench.spec import parse
from workbench.sql.enums import values_of
from workbench.streaming import dedup
from workbench.streaming.lateness import Closing, closing_of, count_late
from workbench.udfs import UDFS

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

    from workbench.alerts.rules import AlertRule
    from workbench.alerts.testfire import AlertTest
    from workbench.lab.sampling import Sample
    from workbench.spec import DaggerSpec

DEFAULT_WATERMARK = "10s"
SHOWN_ROWS = 50
MAX_ROWS = 100_000
COUNT_KEYS = ("records", "decoded", "undecodable", "late")
#: The start of PySpark's warning that ``toPandas`` met an error in Arrow's path.
ARROW_WARNING = "toPandas attempted Arrow optimization"


@dataclass
class Preview:
    """The result of a :func:`preview`; renders as a table in a notebook."""

    rows: pd.DataFrame
    counts: dict[str, int]
    spark_sql: str
    elapsed_s: float
    sql: str = ""
    by_table: dict[str, dict[str, int]] = field(default_factory=dict)
    samples: dict[str, Sample] = field(default_factory=dict, repr=False)
    watermark_ms: int = 10_000
    emit: str = "final"
    truncated: bool = False
    errors: list[str] = field(default_factory=list)  # a few decode errors
    spec: DaggerSpec | None = field(default=None, repr=False)
    result: DataFrame | None = field(default=None, repr=False)  # the rows, as Spark plans them

    def alerts(self, rules: Sequence[AlertRule | dict] | None = None) -> AlertTest:
        """Test-fire the spec's alert rules (or ``rules``: ``alerts:`` entries) over this
        preview's rows, window by window: which alerts would have fired and resolved when
        (:mod:`workbench.alerts.testfire`)."""

        if self.result is None:
            raise WorkbenchError("this preview kept no rows to test alerts on; run it again")
        job = self.spec.name if self.spec is not None else "preview"
        return evaluate(self.result, rules_of(self.spec, rules), job)

    def chart(self, metric: str, *, time: str | None = None, by: str | None = None, top: int = 8):
        """A per-window time series of ``metric``: summed per window, or one line per value
        of ``by`` (the ``top`` largest by total). ``time`` defaults to the first timestamp
        column (``window_timestamp`` in dagger results)."""
        return Chart.of(self.rows, metric, time=time, by=by, top=top)

    def summary(self) -> str:
        c = self.counts
        more = " (truncated)" if self.truncated else ""
        return (
            f"{c['rows']:,} rows{more} in {self.elapsed_s:.2f}s from {c['records']:,} sample "
            f"records: {c['decoded']:,} decoded, {c['undecodable']:,} undecodable, "
            f"{c['late']:,} late (watermark delay {self.watermark_ms / 1000:g}s)"
        )

    def __repr__(self) -> str:
        return f"{self.summary()}\n{self.rows.head(10).to_string(index=False)}"

    def _repr_html_(self) -> str:
        table = self.rows.head(SHOWN_ROWS).to_html(index=False, border=0, na_rep="NULL")
        shown = (
            f"<p>first {SHOWN_ROWS} of {len(self.rows):,} rows</p>"
            if len(self.rows) > SHOWN_ROWS
            else ""
        )
        offsets = "".join(s._repr_html_() for s in self.samples.values())
        return (
            f'<div class="dagger-preview"><p><b>{html.escape(self.summary())}</b></p>{table}'
            f"{shown}<details><summary>Spark SQL</summary><pre>{html.escape(self.spark_sql)}"
            f"</pre></details><details><summary>samples</summary>{offsets}</details></div>"
        )


def preview(
    spec: DaggerSpec | str,
    samples: Mapping[str, Sample] | Iterable[Sample] | Sample,
    *,
    spark: SparkSession | None = None,
    watermark: str | int | None = None,
    emit: str | None = None,
    max_rows: int = MAX_ROWS,
) -> Preview:
    """Run ``spec``'s SQL (or dagger SQL text) over ``samples`` as a batch.

    ``samples`` maps table names to samples (a sample alone, or a list, goes under its own
    table). Bad SQL raises :class:`~workbench.exceptions.SqlError` with line and column.
    """
    t0 = time.perf_counter()
    if spark is None:
        from workbench.runtime.spark import session

        spark = session()
    chosen = by_table(samples)
    sql, rowtime, delay_ms, emit = _query(spec, watermark, emit)
    decoded = {t: s.decoded(spark) for t, s in chosen.items()}
    inputs = [
        engine.Input(
            t,
            d.rows,
            chosen[t].event_timestamp_field,
            values_of(chosen[t].registry(), chosen[t].message),
        )
        for t, d in decoded.items()
    ]
    plan = engine.build(spark, sql, inputs, job="preview", rowtime=rowtime)
    missing = [t for t in plan.translation.tables if t not in chosen]
    if missing:
        raise UnknownNameError("sample", missing[0], chosen, where="(take one with sample())")
    result = plan.result
    if not isinstance(spec, str):  # as the job and replay do (one row per key of a batch)
        result = dedup.apply(result, spec.deduplicate, rowtime)
    with engine.reported(plan):
        rows, truncated = collect(result, max_rows, keys=group_keys(sql))
    closing = closing_of(sql)
    by = {
        t: {
            "records": d.records,
            "decoded": d.decoded,
            "undecodable": d.undecodable,
            "late": late_records(spark, chosen[t], delay_ms, closing),
        }
        for t, d in decoded.items()
        if t in plan.translation.tables
    }
    counts = {k: sum(c[k] for c in by.values()) for k in COUNT_KEYS} | {"rows": len(rows)}
    return Preview(
        rows, counts, plan.translation.sql, time.perf_counter() - t0, sql, by,
        {t: chosen[t] for t in by}, delay_ms, emit, truncated,
        [e for d in decoded.values() for e in d.errors][:5],
        _with_options(spec, chosen, delay_ms, emit), result,
    )  # fmt: skip


def by_table(samples: Mapping[str, Sample] | Iterable[Sample] | Sample) -> dict[str, Sample]:

    if isinstance(samples, Sample):
        return {samples.table: samples}
    if isinstance(samples, Mapping):
        return dict(samples)
    return {s.table: s for s in samples}


def _query(
    spec: DaggerSpec | str, watermark: str | int | None, emit: str | None
) -> tuple[str, str, int, str]:
    if emit not in (None, "final", "updates"):
        raise WorkbenchError(f"emit '{emit}': give 'final' or 'updates'")
    try:
        delay = None if watermark is None else to_millis(watermark)
    except ValueError as err:
        raise WorkbenchError(f"watermark: {err}") from None
    if isinstance(spec, str):
        return spec, "rowtime", delay or to_millis(DEFAULT_WATERMARK), emit or "final"
    return (
        spec.sql,
        spec.rowtime_attribute,
        spec.watermark_delay_ms if delay is None else delay,
        emit or spec.emit,
    )


def _with_options(
    spec: DaggerSpec | str, samples: Mapping[str, Sample], delay_ms: int, emit: str
) -> DaggerSpec | None:
    """The spec this preview stands for (bare SQL: a spec over the samples' streams)."""

    if isinstance(spec, str):
        streams = [
            s.stream.model_dump(mode="json", exclude_defaults=True) for s in samples.values()
        ]
        try:
            return parse(
                {"name": "preview", "streams": streams[:2], "sql": spec, "emit": emit}
                | {"watermark_delay": delay_ms}
            )
        except WorkbenchError:
            return None
    return spec.model_copy(update={"watermark_delay": delay_ms, "emit": emit})


def collect(
    result: DataFrame, max_rows: int = MAX_ROWS, keys: Iterable[str] = ()
) -> tuple[pd.DataFrame, bool]:
    """The result through Arrow, at most ``max_rows`` rows, ordered by :func:`row_order`.
    PySpark's warning when Arrow meets an error only repeats the error (with its Java stack),
    so it is not shown."""
    from pyspark.sql import functions as F

    warnings.filterwarnings("ignore", message=ARROW_WARNING, category=UserWarning)
    order = row_order(result, keys)
    if order:
        result = result.orderBy(*[F.col(f"`{c}`") for c in order])
    rows: pd.DataFrame = result.limit(max_rows + 1).toPandas()  # type: ignore[assignment]
    return rows.head(max_rows), len(rows) > max_rows


def row_order(result: DataFrame, keys: Iterable[str] = ()) -> list[str]:
    """The columns a preview sorts by: the window (timestamp columns, in their order),
    then the group ``keys``, then every other sortable column."""
    from pyspark.sql.types import TimestampNTZType, TimestampType

    columns = sortable(result)
    times = [
        f.name
        for f in result.schema.fields
        if f.name in columns and isinstance(f.dataType, TimestampType | TimestampNTZType)
    ]
    grouped = [k for k in keys if k in columns and k not in times]
    return [*times, *grouped, *[c for c in columns if c not in times and c not in grouped]]


def group_keys(sql: str) -> list[str]:
    """The output columns that identify a row of an aggregating query: its projections
    that hold no aggregate (``count``, ``DistinctCount``...). Empty without GROUP BY."""
    from sqlglot import exp

    from workbench.sql.parse import parse

    tree = parse(sql)
    if not isinstance(tree, exp.Select) or tree.args.get("group") is None:
        return []

    def aggregates(node: exp.Expr) -> bool:
        if any(True for _ in node.find_all(exp.AggFunc)):
            return True
        udfs = (UDFS.find(n.name) for n in node.find_all(exp.Anonymous))
        return any(u is not None and u.kind == "aggregate" for u in udfs)

    return [p.alias_or_name for p in tree.expressions if not aggregates(p)]


#: (Spark application id, Sample.key, records, delay, window) → late records
_LATE: dict[tuple, int] = {}


def late_records(
    spark: SparkSession, sample: Sample, delay_ms: int, closing: Closing | None = None
) -> int:
    """Records the job would drop as late (:mod:`workbench.streaming.lateness`)."""
    closing = closing or Closing()
    key = (spark.sparkContext.applicationId, sample.key, len(sample.records), delay_ms, closing)
    if key not in _LATE:
        rows = sample.decoded(spark).rows
        _LATE[key] = count_late(rows, sample.event_timestamp_field, delay_ms, closing)
    return _LATE[key]


def clear_cache() -> None:
    _LATE.clear()


@dataclass
class Chart:
    """A metric per window: ``data`` has one row per window time and one column per series.
    Renders as SVG in a notebook; :meth:`figure` is the matplotlib figure to adjust."""

    data: pd.DataFrame
    metric: str
    time: str

    @classmethod
    def of(
        cls, rows: pd.DataFrame, metric: str, *, time: str | None, by: str | None, top: int
    ) -> Chart:
        time = time or _time_column(rows)
        for name in (metric, time, by):
            if name is not None and name not in rows.columns:
                raise UnknownNameError("column", name, rows.columns, where="in the preview")
        if by is None:
            data = rows.groupby(time)[[metric]].sum()
        else:
            totals = rows.groupby(by)[metric].sum().nlargest(top).index
            kept = rows[rows[by].isin(totals)]
            data = kept.pivot_table(index=time, columns=by, values=metric, aggfunc="sum")
            data.columns = [str(c) for c in data.columns]
        return cls(data.sort_index(), metric, time)

    def figure(self) -> Any:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8, 3.2), layout="constrained")
        ax = fig.add_subplot()
        for column in self.data.columns:
            ax.plot(self.data.index, self.data[column], marker=".", label=str(column))
        ax.set_xlabel(self.time)
        ax.set_ylabel(self.metric)
        if len(self.data.columns) > 1:
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(alpha=0.3)
        return fig

    def _repr_svg_(self) -> str:
        import io

        out = io.StringIO()
        self.figure().savefig(out, format="svg")
        return out.getvalue()


def chart_metrics(rows: pd.DataFrame, keys: Iterable[str] = ()) -> list[str]:
    """The numeric columns one may chart, the measures first (:func:`measures`)."""
    found = [c for c in rows.columns if _is_number(rows[c])]
    first = measures(rows, keys)
    return first + [c for c in found if c not in first]


def measures(rows: pd.DataFrame, keys: Iterable[str] = ()) -> list[str]:
    """The numeric columns that are measures: not a group key, not a tag (``tag_*``) and
    not an id (``*_id``), as summing ids means nothing. The first is a chart's default."""
    keys = set(keys)
    return [c for c in rows.columns if _is_number(rows[c]) and c not in keys and not _identifies(c)]


def _is_number(series: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(series)) and not pd.api.types.is_bool_dtype(series)


def _identifies(column: str) -> bool:
    name = column.lower()
    return name.startswith("tag_") or name == "id" or name.endswith("_id")


def _time_column(rows: pd.DataFrame) -> str:
    import pandas as pd

    stamps = [c for c in rows.columns if pd.api.types.is_datetime64_any_dtype(rows[c])]
    if not stamps:
        raise WorkbenchError("the preview has no timestamp column to chart over: give time=")
    return next((c for c in stamps if "window" in c), stamps[0])
