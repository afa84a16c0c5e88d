"""Log (console) sink configuration, for debugging."""

from __future__ import annotations

from typing import Literal

from workbench.sinks.registry import SINKS, SinkConfig


class LogConfig(SinkConfig):
    type: Literal["log"] = "log"
    rows: int = 20
    truncate: bool = False


SINKS.add("log", LogConfig)
