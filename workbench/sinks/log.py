"""Log (console) sink, for debugging: each micro-batch's rows printed as a table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workbench.sinks.registry import SINKS, SinkConfig, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class LogConfig(SinkConfig):
    type: Literal["log"] = "log"
    rows: int = 20
    truncate: bool = False

    def open(self, ctx: SinkContext, index: int) -> LogWriter:
        return LogWriter(self, ctx.job)


class LogWriter:
    def __init__(self, config: LogConfig, job: str):
        self.config, self.job = config, job

    def write(self, batch: DataFrame, batch_id: int) -> int:
        count = batch.count()
        if count:
            print(f"[{self.job}] batch {batch_id}: {count} rows", flush=True)
            batch.show(self.config.rows, truncate=self.config.truncate)
        return count

    def close(self) -> None:
        pass


SINKS.add("log", LogConfig)
