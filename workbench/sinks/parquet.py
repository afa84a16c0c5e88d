"""Parquet sink configuration: the time-bucketed warehouse layout (dt=.../hour=...)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workbench.sinks.registry import SINKS, SinkConfig


class ParquetConfig(SinkConfig):
    type: Literal["parquet"] = "parquet"
    path: str
    time_column: str = "window_timestamp"
    partition_by: list[str] = Field(default_factory=lambda: ["dt", "hour"])


SINKS.add("parquet", ParquetConfig)
