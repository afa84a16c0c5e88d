"""A Parquet sink's folder as every reader sees it: exactly the committed batches, one schema.

Spark's file sink commits a batch by writing its ``_spark_metadata`` log entry after the
batch's files; Spark's readers read the log, but pyarrow, pandas or DuckDB reading the
folder read every file in it: the files of a batch being written, and those a killed
batch left behind (its replay writes them again: rows doubled). So the sink writes through
:data:`PROTOCOL` (``io.daggerworkbench.sink.StagedCommitProtocol``, set as the session's
``spark.sql.streaming.commitProtocolClass``): a batch's files are written under
``_dagger_staging/`` (pyarrow and pandas skip names starting with ``_`` or ``.``) and renamed into
place once the log holds them. Before each batch the writer calls :func:`settle`:

- staged files the log holds (a crash between the log's commit and the renames) are
  published; staged files it does not hold (a batch that never committed) are dropped;
- data files in the folder the log does not hold (left by a killed batch before files
  were staged) are moved to ``_dagger_orphans/``, at the writer's first batch.

An edit that adds a column writes files with a wider schema than the folder's first ones,
and a reader of the folder takes its schema from the first file it finds: the new column
would be missing. :func:`settle` keeps :data:`SCHEMA_FILE`, a Parquet file with no rows and
the union of the batches' schemas, named to be found first, so ``pandas.read_parquet(folder)``
and ``pyarrow.parquet.read_table(folder)`` return every column (older rows hold nulls).
Spark readers read the log's files instead: ``spark.read.option("mergeSchema", True)``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from workbench.sinks.generations import logged_files, newest_logged

#: the commit protocol class (the UDF jar) and the Spark setting that names it
PROTOCOL = "io.daggerworkbench.sink.StagedCommitProtocol"
PROTOCOL_CONF = "spark.sql.streaming.commitProtocolClass"
STAGING = "_dagger_staging"
ORPHANS = "_dagger_orphans"
#: no rows, the folder's schema; sorts before any ``column=value`` folder
SCHEMA_FILE = "0-schema.parquet"


@dataclass(frozen=True)
class Settled:
    published: int = 0  # staged files of committed batches, renamed into place
    dropped: int = 0  # staged files of batches that never committed
    set_aside: int = 0  # unstaged files the log does not hold, moved to ORPHANS


def settle(folder: Path, orphans: bool = False) -> Settled:
    """Publish or drop what staging holds, set aside unlogged files (``orphans``), and
    keep the schema file; see the module docstring. The whole log is read only when
    staging holds files or ``orphans`` is asked; otherwise only its newest entry."""
    folder = Path(os.path.abspath(folder))  # as the log names its files
    published = dropped = set_aside = 0
    if (folder / STAGING).is_dir() or orphans:
        held = set(logged_files(folder) or ())
        if held:
            published, dropped = _publish(folder, held)
            set_aside = _set_aside(folder, held) if orphans else 0
    newest = newest_logged(folder)
    if newest is not None and newest.exists():
        _widen_schema(folder, newest)
    return Settled(published, dropped, set_aside)


def _publish(folder: Path, files: set[Path]) -> tuple[int, int]:
    """Rename the staged files ``files`` holds into place, drop the others."""
    staging = folder / STAGING
    if not staging.is_dir():
        return 0, 0
    published = dropped = 0
    for staged in sorted(p for p in staging.rglob("*") if p.is_file()):
        target = folder / staged.relative_to(staging)
        if target in files:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
            published += 1
        elif not staged.name.startswith("."):  # a checksum file is not counted
            dropped += 1
    shutil.rmtree(staging, ignore_errors=True)
    return published, dropped


def _visible(folder: Path) -> list[Path]:
    """The data files a reader of the folder reads (no name starting with ``_`` or ``.``)."""
    return [
        p
        for p in folder.rglob("*.parquet")
        if not any(part[:1] in "_." for part in p.relative_to(folder).parts)
        and p.name != SCHEMA_FILE
    ]


def _set_aside(folder: Path, files: set[Path]) -> int:
    moved = 0
    for path in _visible(folder):
        if path not in files:
            target = folder / ORPHANS / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
            moved += 1
    return moved


def _widen_schema(folder: Path, newest: Path) -> None:
    """:data:`SCHEMA_FILE` with the union of its schema and ``newest``'s (a new column
    added at the end; a column whose type changed takes the newest type)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(newest).remove_metadata()
    path = folder / SCHEMA_FILE
    if path.exists():
        known = pq.read_schema(path).remove_metadata()
        try:
            schema = pa.unify_schemas([known, schema], promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            schema = pa.schema([*schema, *(f for f in known if f.name not in schema.names)])
        if schema.equals(known):
            return
    aside = folder / f".{SCHEMA_FILE}.tmp"
    pq.write_table(schema.empty_table(), aside)
    os.replace(aside, path)
