"""Dead letters to Parquet: one folder per micro-batch, ``<path>/run=<query>/batch=<id>``.

A replayed micro-batch overwrites its own folder, so a dead letter is written once.
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

    def write(self, letters: Letters, batch_id: int) -> int:
        folder = self.path / f"run={self.ctx.query_id}" / f"batch={batch_id}"
        shutil.rmtree(folder, ignore_errors=True)
        if not letters:
            return 0
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder.mkdir(parents=True)
        if letters.held:
            table = pa.Table.from_pylist(letters.held, schema=_arrow_schema())
            pq.write_table(table, folder / "part-00000.parquet")
        spilled = 0 if letters.spilled is None else _write_in_tasks(letters.spilled, folder)
        return len(letters.held) + spilled

    def close(self) -> None:
        pass


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
