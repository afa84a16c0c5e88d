"""The sink registry: a sink type's name maps to its config model (and, later, its writer).

A sink module defines a pydantic ``Config`` (with ``type: Literal[name]``) and calls
``SINKS.add(name, Config)``. Third-party sinks register through the
``workbench.sinks`` entry-point group.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

from pydantic import BaseModel, ConfigDict

from workbench.exceptions import UnknownNameError

BUILTIN = ("influx", "kafka", "parquet", "log")


class SinkConfig(BaseModel):
    """Common base: unknown keys are errors, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str


class SinkRegistry:
    def __init__(self) -> None:
        self._configs: dict[str, type[SinkConfig]] = {}
        self._loaded = False

    def add(self, name: str, config: type[SinkConfig]) -> None:
        self._configs[name] = config

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for name in BUILTIN:
                import_module(f"workbench.sinks.{name}")
            for ep in entry_points(group="workbench.sinks"):
                ep.load()

    def names(self) -> list[str]:
        self._load()
        return sorted(self._configs)

    def config_model(self, name: str) -> type[SinkConfig]:
        self._load()
        if name not in self._configs:
            raise UnknownNameError("sink type", name, self._configs)
        return self._configs[name]


SINKS = SinkRegistry()
