"""The fault registry: one module per fault, each a :class:`Fault` registered by name.

A fault's :meth:`~Fault.apply` acts on the run's :class:`~workbench.chaos.env.ChaosEnv`
and returns a *revert record*: JSON data from which :meth:`~Fault.revert` undoes it, in
this process (``env`` given) or in the next run replaying the revert journal (``env``
None: the record alone must do). Adding a fault is a new module that ends with
``FAULTS.add(name, fault)``, named in :data:`BUILTIN` (:class:`workbench.plugins.Plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from workbench.exceptions import ChaosError, did_you_mean
from workbench.plugins import Plugins

if TYPE_CHECKING:
    from workbench.chaos.env import ChaosEnv


class Fault:
    """A fault of ``type`` (kafka, spark, sink, network) called ``name``."""

    name: ClassVar[str]
    type: ClassVar[str]
    #: what to do when a run with this fault fails (the report prints it)
    playbook: ClassVar[str] = ""
    #: the parts of the run's :class:`~workbench.chaos.env.ChaosEnv` it acts on
    #: (``brokers``, ``client``, ``proxy``, ``sink``); a run makes a fault proxy for the
    #: faults that need ``proxy``
    needs: ClassVar[tuple[str, ...]] = ()

    def apply(self, env: ChaosEnv, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def revert(self, record: dict[str, Any], env: ChaosEnv | None) -> None:
        raise NotImplementedError


#: the modules registering the built-in faults
BUILTIN = tuple(
    f"workbench.chaos.faults.{name}"
    for name in ("broker_kill", "driver_kill", "network", "sink_outage", "broker_disk")
)
FAULTS = Plugins[Fault](
    "fault",
    BUILTIN,
    unknown=lambda name, known: ChaosError(f"No fault '{name}'.{did_you_mean(name, known)}"),
)
