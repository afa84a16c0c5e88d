"""Promote mode: what a notebook records while ``workbench promote`` executes it.

``workbench promote`` (:mod:`workbench.promote`) runs the notebook under papermill with
``$WORKBENCH_PROMOTE_DIR`` in the kernel's environment. :mod:`workbench.notebook` then
records into that folder as the notebook goes, with no cell of the notebook changed:

* ``spec.yaml``: the spec in use (``wb.use``), with ``wb.connect``'s servers applied and
  the SQL of the last preview (``wb.preview`` or a ``%%dagger`` cell) in place of its own
  (and the preview's ``watermark``/``emit`` when the preview was given them);
* ``samples/TABLE.json``: each sample the last preview read (:meth:`Sample.save`: the
  exact Kafka offsets);
* ``preview.jsonl``: the last preview's rows as the notebook saw them (JSON lines) and
  ``preview.json`` its options (SQL, tables, watermark, emit, counts, columns);
* ``replay.jsonl``: the same samples through the production plan with the spec recorded
  then (:func:`workbench.lab.replay.replay_samples`, on the kernel's Spark, already warm), and
  ``replay.json`` (that spec, rows, seconds, or the error). The parity check uses it when
  the final spec is that spec, and replays again otherwise.

Outside promote mode nothing is recorded. In promote mode a streaming job refuses to start
(:meth:`workbench.streaming.job.StreamingJob.start`): the stream never runs inside papermill.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import PromoteError
from workbench.paths import promote_folder
from workbench.promote import (
    PREVIEW_FILE,
    REPLAY_FILE,
    REPLAY_ROWS,
    ROWS_FILE,
    SAMPLES_DIR,
    SPEC_FILE,
)
from workbench.settings import settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.lab.preview import Preview
    from workbench.spec import DaggerSpec


#: The record folder when promote mode is on, else None.
folder = promote_folder


def record(
    spec: DaggerSpec | None,
    servers: str | None,
    preview: Preview | None,
    given: Mapping[str, Any],
    new_preview: bool = True,
    spark: Callable[[], SparkSession] | None = None,
) -> None:
    """Write the promoted spec into the record folder (promote mode only), and, when
    ``new_preview`` (``preview`` was just made), its rows, samples and their replay; a
    later ``wb.use``/``wb.connect`` rewrites the spec only. ``given`` holds the spec keys
    the preview was explicitly given."""
    where = folder()
    if where is None:
        return
    where.mkdir(parents=True, exist_ok=True)
    promoted = promoted_spec(spec, servers, preview, given)
    if promoted is not None:
        (where / SPEC_FILE).write_text(promoted.to_yaml(), encoding="utf-8")
    if preview is not None and new_preview:
        _record_preview(where, preview, given)
        if promoted is not None and spark is not None:
            _replay(where, promoted, spark())


def promoted_spec(
    spec: DaggerSpec | None,
    servers: str | None,
    preview: Preview | None,
    given: Mapping[str, Any],
) -> DaggerSpec | None:
    """The spec the job runs: ``spec`` (else the preview's own), with the preview's SQL
    and explicit options, and every Kafka address set to ``servers`` when given."""
    base = spec if spec is not None else (preview.spec if preview is not None else None)
    if base is None:
        return None
    if preview is not None:
        update = {"sql": preview.sql} | {k: v for k, v in given.items() if v is not None}
        base = base.model_copy(update=update)
    if servers:
        from workbench.streaming.job import with_bootstrap

        base = with_bootstrap(base, servers)
    return base


def _record_preview(where: Path, preview: Preview, given: Mapping[str, Any]) -> None:
    samples = where / SAMPLES_DIR
    shutil.rmtree(samples, ignore_errors=True)
    samples.mkdir()
    for table, sample in preview.samples.items():
        sample.save(samples / f"{table}.json")
    preview.rows.to_json(
        where / ROWS_FILE,
        orient="records",
        lines=True,
        date_format="iso",
        date_unit="us",
        double_precision=15,
        default_handler=str,
    )
    options = {
        "sql": preview.sql,
        "tables": sorted(preview.samples),
        "watermark_ms": preview.watermark_ms,
        "emit": preview.emit,
        "given": dict(given),
        "counts": preview.counts,
        "truncated": preview.truncated,
        "columns": [str(c) for c in preview.rows.columns],
    }
    (where / PREVIEW_FILE).write_text(json.dumps(options, indent=2, default=str), "utf-8")


def _replay(where: Path, spec: DaggerSpec, spark: SparkSession) -> None:
    """The samples through the production plan, now, on the kernel's Spark. Any error is
    kept for the promote process, which replays again and reports it."""
    import time

    from workbench.lab.replay import replay_samples

    t0 = time.perf_counter()
    info: dict[str, Any] = {"spec_yaml": spec.to_yaml()}
    samples = sorted((where / SAMPLES_DIR).glob("*.json"))
    try:
        done = replay_samples(spark, samples, where / REPLAY_ROWS, spec=spec)
        info |= {"rows": done.rows, "undecodable": done.undecodable}
    except Exception as err:  # noqa: BLE001 (reported by the promote process)
        info["error"] = f"{type(err).__name__}: {err}"
    info["seconds"] = round(time.perf_counter() - t0, 3)
    (where / REPLAY_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")


def notebook_path(notebook: str | Path | None) -> Path:
    """The notebook file ``wb.promote`` promotes: ``notebook``, else the kernel's own
    notebook when Jupyter names it (``$JPY_SESSION_NAME``); refuses clearly otherwise."""
    if folder() is not None:
        raise PromoteError("wb.promote() ran during promote: remove it from the notebook")
    chosen = notebook or settings().session_name
    if not chosen:
        raise PromoteError(
            "give the notebook file to promote, e.g. wb.promote('my-dagger.ipynb', "
            "team='pricing'); save it first: promote executes the saved file in a new kernel"
        )
    path = Path(chosen)
    if not path.is_file():
        raise PromoteError(f"{path}: no such notebook file; give its path (and save it first)")
    return path
