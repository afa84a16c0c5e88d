"""Dead letters to Parquet: one folder per micro-batch, ``<path>/run=<query>/batch=<id>``.

A replayed micro-batch overwrites its own folder, so a dead letter is written once.
The default folder is ``$WORKBENCH_HOME/dead-letters/<job>``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.paths import subdir
from workbench.sinks.registry import SINKS, LetterSinkConfig, SinkContext

if TYPE_CHECKING:
    from workbench.spec import DaggerSpec, DeadLetterSpec


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

    def write(self, letters: list[dict[str, Any]], batch_id: int) -> int:
        folder = self.path / f"run={self.ctx.query_id}" / f"batch={batch_id}"
        shutil.rmtree(folder, ignore_errors=True)
        if letters:
            import pyarrow as pa
            import pyarrow.parquet as pq

            folder.mkdir(parents=True)
            table = pa.Table.from_pylist(letters, schema=_arrow_schema())
            pq.write_table(table, folder / "part-00000.parquet")
        return len(letters)

    def close(self) -> None:
        pass


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
