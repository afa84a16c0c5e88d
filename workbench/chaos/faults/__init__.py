"""The fault registry: one module per fault, each a :class:`Fault` registered by name.

A fault's :meth:`~Fault.apply` acts on the run's :class:`~workbench.chaos.env.ChaosEnv`
and returns a *revert record*: JSON data from which :meth:`~Fault.revert` undoes it, in
this process (``env`` given) or in the next run replaying the revert journal (``env``
None: the record alone must do). Adding a fault is a new module plus one line below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from workbench.exceptions import ChaosError, did_you_mean

if TYPE_CHECKING:
    from workbench.chaos.env import ChaosEnv


class Fault:
    """A fault of ``type`` (kafka, spark, sink, network) called ``name``."""

    name: ClassVar[str]
    type: ClassVar[str]
    #: what to do when a run with this fault fails (the report prints it)
    playbook: ClassVar[str] = ""

    def apply(self, env: ChaosEnv, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def revert(self, record: dict[str, Any], env: ChaosEnv | None) -> None:
        raise NotImplementedError


class FaultRegistry:
    """Faults by name."""

    def __init__(self) -> None:
        self._faults: dict[str, Fault] = {}

    def register(self, fault: type[Fault]) -> type[Fault]:
        self._faults[fault.name] = fault()
        return fault

    def unregister(self, name: str) -> None:
        """Forget a fault (one a test registered)."""
        self._faults.pop(name, None)

    def get(self, name: str) -> Fault:
        if name not in self._faults:
            raise ChaosError(f"No fault '{name}'.{did_you_mean(name, self._faults)}")
        return self._faults[name]

    def names(self) -> list[str]:
        return sorted(self._faults)


FAULTS = FaultRegistry()

from workbench.chaos.faults import (  # noqa: E402
    broker_disk,
    broker_kill,
    driver_kill,
    network,
    sink_outage,
)

for _module in (broker_kill, driver_kill, network, sink_outage, broker_disk):
    for _fault in _module.FAULTS:
        FAULTS.register(_fault)
