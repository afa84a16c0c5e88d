"""``workbench replay``: run dagger SQL as a batch over recordings of decoded messages.

It uses the same translation and plan builder as the streaming job, so its rows are
the rows the streaming job emits for the same events once every window is final.

:func:`replay_samples` reads Kafka instead: exactly the offsets a saved sample recorded
(:mod:`workbench.lab.sampling`), through Spark's Kafka batch source and the job's JVM decoder,
so a notebook preview can be checked against a read that shares none of its Kafka code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import engine
from workbench.exceptions import BadRecordError, ReplayInputError, clip, did_you_mean
from workbench.lab.results import write_rows
from workbench.lab.sampling import Sample
from workbench.rowtime import event_time
from workbench.schemas import default_registry_with
from workbench.sources import bounded
from workbench.sources.kafka import decoded_records, decoded_rows
from workbench.streaming import dedup
from workbench.streams import resolve

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.spec import DaggerSpec

DEFAULT_ROWTIME_FIELD = "event_timestamp"


@dataclass
class ReplayResult:
    rows: int
    out: Path
    rejects: list[dict] = field(default_factory=list)
    spark_sql: str = ""
    undecodable: int = 0  # Kafka records that did not decode (the job's dead letters)


def replay(
    spark: SparkSession | None,
    tables: Mapping[str, str],
    out: str | Path,
    *,
    sql: str | None = None,
    spec: DaggerSpec | None = None,
    rowtime_field: str | None = None,
    rejects_path: str | Path | None = None,
) -> ReplayResult:
    """Run ``sql`` (or ``spec``'s SQL) over ``tables`` (table → recording path).

    Table names and JSON Lines rows are checked before Spark starts (``spark`` None: the
    workbench's session, started only then).

    Rows that cannot be read fail the run, unless ``rejects_path`` is given: then
    they are written there (file, line, error, raw) and the run goes on without them.
    """

    plan, rejects = plan_recordings(
        spark, tables, sql=sql, spec=spec, rowtime_field=rowtime_field, rejects_path=rejects_path
    )
    with engine.reported(plan):
        rows = write_rows(plan.result, out)
    return ReplayResult(rows, Path(out), rejects, plan.translation.sql)


def plan_recordings(
    spark: SparkSession | None,
    tables: Mapping[str, str],
    *,
    sql: str | None = None,
    spec: DaggerSpec | None = None,
    rowtime_field: str | None = None,
    rejects_path: str | Path | None = None,
) -> tuple[engine.Plan, list[dict]]:
    """The replay's plan over recordings (see :func:`replay`) and the rejected rows."""
    if (sql is None) == (spec is None):
        raise ReplayInputError("give exactly one of sql or spec")
    check_tables(list(tables), sql, spec)
    schemas, fields = _stream_schemas(spec, rowtime_field)
    events = {t: fields.get(t, rowtime_field or DEFAULT_ROWTIME_FIELD) for t in tables}
    checked = {t: bounded.check(p, schemas.get(t), events[t]) for t, p in tables.items()}
    early = [{"table": t, **r} for t, c in checked.items() for r in c.rejects]
    if rejects_path is None:
        _handle_rejects(early, None)  # fails before Spark starts
    if spark is None:
        from workbench.runtime.spark import session

        spark = session()
    inputs, rejects = [], []
    for table, path in tables.items():
        recording = bounded.read(spark, path, schemas.get(table), events[table], checked[table])
        frame, untimed = _split_untimed(recording.frame, events[table], path)
        inputs.append(engine.Input(table, frame, events[table]))
        rejects += [{"table": table, **r} for r in recording.rejects + untimed]
    _handle_rejects(rejects, rejects_path)
    return _plan(spark, inputs, sql, spec), rejects


def replay_samples(
    spark: SparkSession,
    samples: Sequence[str | Path],
    out: str | Path,
    *,
    sql: str | None = None,
    spec: DaggerSpec | None = None,
) -> ReplayResult:
    """Run ``sql`` (or ``spec``'s SQL) over the offsets of saved samples (one per table).

    Records that do not decode are left out and counted, as the job's dead letters are.
    """

    with (
        sample_plan(spark, samples, sql=sql, spec=spec) as (plan, undecodable),
        engine.reported(plan),
    ):
        rows = write_rows(plan.result, out)
    return ReplayResult(rows, Path(out), [], plan.translation.sql, undecodable)


@contextmanager
def sample_plan(
    spark: SparkSession,
    samples: Sequence[str | Path],
    *,
    sql: str | None = None,
    spec: DaggerSpec | None = None,
) -> Iterator[tuple[engine.Plan, int]]:
    """The replay's plan over saved samples' offsets (see :func:`replay_samples`) and how
    many records did not decode; the decoded records are cached while it is used."""
    from pyspark.sql import functions as F

    if (sql is None) == (spec is None):
        raise ReplayInputError("give exactly one of sql or spec")
    inputs, counts, cached = [], [], []
    try:
        for path in samples:
            sample = Sample.load(path, read=False)
            stream = spec.stream(sample.table) if spec else sample.stream
            registry = default_registry_with([*(spec.schemas if spec else ()), *sample.schemas])
            raw = spark.read.format("kafka").options(**sample.spark_options()).load()
            records = decoded_records(spark, raw, stream, registry).persist()
            cached.append(records)
            counts.append(records.where(F.col("_decoded.error").isNotNull()).count())
            inputs.append(
                engine.Input(sample.table, decoded_rows(records), stream.event_timestamp_field)
            )
        yield _plan(spark, inputs, sql, spec), sum(counts)
    finally:
        for frame in cached:
            frame.unpersist()


def _plan(
    spark: SparkSession, inputs: list[engine.Input], sql: str | None, spec: DaggerSpec | None
) -> engine.Plan:
    """The replay's plan: the spec's SQL and rowtime name (and its ``deduplicate``), or
    ``sql`` over ``rowtime``."""
    plan = engine.build(
        spark,
        spec.sql if spec else sql or "",
        inputs,
        job="replay",
        rowtime=spec.rowtime_attribute if spec else "rowtime",
    )
    if spec is None or spec.deduplicate is None:
        return plan
    return replace(plan, result=dedup.apply(plan.result, spec.deduplicate))


def _split_untimed(frame: DataFrame, event_field: str, path: str) -> tuple[DataFrame, list[dict]]:
    """Rows without a readable event time are rejects too: windows cannot place them."""
    from pyspark.sql import functions as F

    ts = event_time(frame, event_field)
    columns = [F.col(f"`{c}`") for c in frame.columns]
    missing = frame.where(ts.isNull()).select(F.to_json(F.struct(*columns)).alias("raw"))
    rows = missing.limit(bounded.MAX_REJECTS).collect()
    error = f"no readable event time in field '{event_field}'"
    rejects = [
        {"file": path, "line": None, "error": error, "raw": clip(r["raw"], 2000)} for r in rows
    ]
    return (frame.where(ts.isNotNull()) if rejects else frame), rejects


def _place(reject: dict) -> str:
    """``file:line: `` (``file: `` when the line is not known, as in Parquet)."""
    if not reject.get("file"):
        return ""
    line = f":{reject['line']}" if reject.get("line") else ""
    return f"{reject['file']}{line}: "


def check_tables(tables: Sequence[str], sql: str | None, spec: DaggerSpec | None) -> None:
    """Every ``--table NAME`` names a table the SQL reads, and every such table has one:
    checked before Spark starts, so a wrong name is blamed on the flag, not the SQL."""
    from workbench.sql.names import stream_tables
    from workbench.sql.parse import parse

    twice = sorted({t for t in tables if [x.lower() for x in tables].count(t.lower()) > 1})
    if twice:
        raise ReplayInputError(
            f"--table {clip(twice[0])} is given more than once; give one recording per table "
            "(a folder holds several files)"
        )
    query = spec.sql if spec else sql or ""
    read = list(dict.fromkeys(t.name for t in stream_tables(parse(query))))
    lowered = {t.lower() for t in read}
    for name in tables:
        if name.lower() not in lowered:
            hint = did_you_mean(name, read)
            raise ReplayInputError(
                f"--table {clip(name)}=...: the SQL reads no table '{clip(name)}'.{hint} "
                "Name each recording after a table in the SQL's FROM."
            )
    given = {t.lower() for t in tables}
    missing = [t for t in read if t.lower() not in given]
    if missing:
        raise ReplayInputError(
            f"the SQL reads {', '.join(missing)} but no --table gives it: add "
            + " ".join(f"--table {t}=PATH" for t in missing)
        )


def _stream_schemas(
    spec: DaggerSpec | None, rowtime_field: str | None
) -> tuple[dict, dict[str, str]]:
    if spec is None:
        return {}, {}

    resolved = resolve(spec)
    schemas = {r.spec.table: r.schema for r in resolved}
    fields = {r.spec.table: rowtime_field or r.spec.event_timestamp_field for r in resolved}
    return schemas, fields


def _handle_rejects(rejects: list[dict], rejects_path: str | Path | None) -> None:
    if not rejects:
        return
    if rejects_path is None:
        shown = "\n".join(f"  {_place(r)}{r['error']}" for r in rejects[:10])
        more = f"\n  ... and {len(rejects) - 10} more" if len(rejects) > 10 else ""
        raise BadRecordError(
            f"{len(rejects)} input row(s) cannot be read:\n{shown}{more}\n"
            "Fix them, or pass --rejects FILE to set them aside and go on.",
            rejects,
        )
    path = Path(rejects_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for reject in rejects:
            out.write(json.dumps(reject) + "\n")
