"""Dead letters to Parquet: one folder per micro-batch, ``<path>/run=<query>/batch=<id>``.

A replayed micro-batch overwrites its own folder, and a letter whose record an earlier
run of the job lettered already (an edit, a rollback or a failover reads records again
on a new checkpoint) is not written again: the writer loads the job's letter index
(:mod:`workbench.sinks.lettered`) from the folder's files at its first write, so a dead
letter is written once per (topic, partition, offset). Each run folder names its job
in ``_dagger_job``, so jobs sharing a folder keep their own letters.

The default folder is ``$WORKBENCH_HOME/dead-letters/<job>``. The letters the taps held
are written by the driver (``part-00000.parquet``); spilled ones (a flood) by Spark's tasks
as they read them again from Kafka, one file per task (``part-r<task>.parquet``), with the
same Arrow schema, so every file of the folder reads alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.paths import subdir
from workbench.sinks.lettered import Lettered
from workbench.sinks.registry import SINKS, LetterSinkConfig, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.spec import DaggerSpec, DeadLetterSpec
    from workbench.streaming.deadletters import Letters


def default_path(job: str) -> Path:
    return subdir("dead-letters") / job


class DeadParquetConfig(LetterSinkConfig):
    type: Literal["parquet"] = "parquet"
    path: str

    @classmethod
    def for_job(cls, dead: DeadLetterSpec, spec: DaggerSpec) -> DeadParquetConfig:
        return cls(path=dead.path or str(default_path(spec.name)))

    def describe(self) -> str:
        return f"parquet {self.path}"

    def open_letters(self, ctx: SinkContext) -> ParquetLetters:
        return ParquetLetters(Path(self.path), ctx)


class ParquetLetters:
    def __init__(self, path: Path, ctx: SinkContext):
        self.path, self.ctx = path, ctx
        self._lettered: Lettered | None = None

    @property
    def lettered(self) -> Lettered:
        """The job's letter index, loaded from the folder at the first write."""
        if self._lettered is None:
            self._lettered = _load(self.path, self.ctx.job)
        return self._lettered

    def write(self, letters: Letters, batch_id: int) -> int:
        run = self.path / f"run={self.ctx.query_id}"
        folder = run / f"batch={batch_id}"
        part = f"{run.name}/{folder.name}"
        lettered = self.lettered
        shutil.rmtree(folder, ignore_errors=True)
        lettered.forget(part)
        if not letters:
            return 0
        import pyarrow as pa
        import pyarrow.parquet as pq

        held = list(lettered.fresh(letters.held))
        folder.mkdir(parents=True)
        (run / JOB_FILE).write_text(self.ctx.job, encoding="utf-8")
        if held:
            table = pa.Table.from_pylist(held, schema=_arrow_schema())
            pq.write_table(table, folder / "part-00000.parquet")
        spilled = 0
        if letters.spilled is not None:
            spilled = _write_in_tasks(_unlettered(letters.spilled, lettered), folder)
        if not held and not spilled:
            shutil.rmtree(folder)  # every letter was written before
        _index(lettered, folder, part)
        return len(held) + spilled

    def close(self) -> None:
        pass


#: a run folder's job (jobs sharing a dead-letter folder each keep their own index)
JOB_FILE = "_dagger_job"
_PLACE = ["topic", "partition", "offset", "kafka_timestamp"]


def _load(path: Path, job: str) -> Lettered:
    """The letters ``job``'s runs wrote under ``path`` (runs from before ``_dagger_job``
    count as the job's)."""
    lettered = Lettered()
    for run in sorted(path.glob("run=*")):
        owner = run / JOB_FILE
        if owner.exists() and owner.read_text(encoding="utf-8") != job:
            continue
        for folder in sorted(run.glob("batch=*")):
            _index(lettered, folder, f"{run.name}/{folder.name}")
    return lettered


def _index(lettered: Lettered, folder: Path, part: str) -> None:
    """Add the letters of ``folder`` (its Parquet files, as written) to ``lettered``."""
    import pyarrow.dataset as ds

    files = ds.dataset(folder, format="parquet") if folder.is_dir() else None
    if files is None or not files.files:
        return
    for letter in files.to_table(columns=_PLACE).to_pylist():
        lettered.add(letter, part)


def _unlettered(letters: DataFrame, lettered: Lettered) -> DataFrame:
    """``letters`` (spilled, a Spark DataFrame) but those ``lettered`` holds."""
    from pyspark.sql import functions as F

    known = lettered.known()
    if not known:
        return letters
    schema = "topic string, partition int, offset long, kafka_timestamp timestamp"
    held = letters.sparkSession.createDataFrame(known, schema)
    return letters.join(F.broadcast(held), _PLACE, "left_anti").select(*letters.columns)


def _write_in_tasks(letters: DataFrame, folder: Path) -> int:
    """Write ``letters`` from Spark's tasks, a Parquet file per task (written aside, then
    renamed: a retried task replaces its file whole); how many they wrote."""
    schema, where = _arrow_schema(), str(folder)

    def write(batches: Any) -> Any:
        import os
        import uuid

        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyspark import TaskContext

        task = TaskContext.get()
        name = f"part-r{task.partitionId() if task else 0:05d}.parquet"
        aside = os.path.join(where, f".{name}.{uuid.uuid4().hex}")
        rows, out = 0, None
        for batch in (b for b in batches if b.num_rows):
            out = out or pq.ParquetWriter(aside, schema)
            out.write_table(pa.Table.from_batches([batch]).cast(schema))
            rows += batch.num_rows
        if out is not None:  # a task whose span held no letter writes no file
            out.close()
            os.replace(aside, os.path.join(where, name))
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    return sum(row.rows for row in letters.mapInArrow(write, "rows long").collect())


def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("table", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("kafka_timestamp", pa.timestamp("us", tz="UTC")),
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("error", pa.string()),
        ]
    )


SINKS.add("parquet", DeadParquetConfig)
