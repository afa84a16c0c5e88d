"""A standing fault proxy: ``workbench chaos proxy`` serves a broker's advertised port for
as long as it runs, so a dagger can connect through it before a chaos run starts and
keep running after; runs switch its faults through a control file.

The broker (started with ``workbench dev kafka up --advertised-port P``) advertises ``P``;
:func:`serve` forwards ``P`` to the broker's own port and writes
``STATE_DIR/fault-proxy.json`` (its pid, address and the ``applied`` version of the
faults). A run (or a test) finds it with :func:`standing` and gets a
:class:`StandingProxy`, whose :meth:`~StandingProxy.set` writes the faults to
``STATE_DIR/fault-proxy-faults.json`` and waits until the proxy applied them. A fault
left by a killed run is healed by the next run's journal replay (the revert record
names the control file).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from workbench.chaos.proxy import FaultProxy, Faults
from workbench.dev.detached import process_running
from workbench.dev.ports import HOST
from workbench.exceptions import ChaosError

RECORD, CONTROL = "fault-proxy.json", "fault-proxy-faults.json"
POLL_S = 0.1


def serve(state_dir: Path, port: int, advertised_port: int, stop: threading.Event) -> None:
    """Forward ``advertised_port`` to the broker's ``port`` until ``stop`` is set, applying
    the faults the control file asks for."""
    state_dir = Path(state_dir)
    record, control = state_dir / RECORD, state_dir / CONTROL
    _write(control, {"version": 0, "faults": asdict(Faults())})
    proxy = FaultProxy((HOST, port), port=advertised_port).start()
    applied = -1
    try:
        while not stop.is_set():
            wanted = _read(control)
            if wanted and wanted.get("version") != applied:
                proxy.set(**wanted["faults"])
                applied = wanted["version"]
                _write(record, {"pid": os.getpid(), "address": proxy.address,
                                "target": port, "applied": applied})  # fmt: skip
            stop.wait(POLL_S)
    finally:
        proxy.stop()
        record.unlink(missing_ok=True)


def standing(state_dir: Path) -> StandingProxy | None:
    """The standing proxy serving the broker in ``state_dir``, if one runs."""
    data = _read(Path(state_dir) / RECORD)
    if not data or not process_running(int(data.get("pid", 0)), "proxy"):
        return None
    return StandingProxy(Path(state_dir), data["address"])


class StandingProxy:
    """A :func:`serve` process as a run sees it: ``address``, ``faults``, ``set``, ``heal``
    (``stop`` leaves it running: it is not the run's)."""

    def __init__(self, state_dir: Path, address: str):
        self.state_dir, self.address = Path(state_dir), address

    @property
    def port(self) -> int:
        return int(self.address.rpartition(":")[2])

    @property
    def control(self) -> Path:
        return self.state_dir / CONTROL

    @property
    def faults(self) -> Faults:
        data = _read(self.control) or {}
        return Faults(**data.get("faults", {}))

    def set(self, **changes: Any) -> Faults:
        faults = replace(self.faults, **changes)
        version = int((_read(self.control) or {}).get("version", 0)) + 1
        _write(self.control, {"version": version, "faults": asdict(faults)})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if (_read(self.state_dir / RECORD) or {}).get("applied") == version:
                return faults
            time.sleep(POLL_S / 2)
        raise ChaosError(
            f"The standing fault proxy at {self.address} did not apply {faults} within 5 s: "
            f"is `workbench chaos proxy` still running (see {self.state_dir / RECORD})?"
        )

    def heal(self) -> Faults:
        return self.set(latency_ms=0.0, loss=0.0, partition=None)

    def stop(self) -> None:
        """Nothing: the standing proxy outlives the run."""


def heal_control(path: str | Path) -> None:
    """Ask the standing proxy whose control file is ``path`` to heal (a journal replay)."""
    control = Path(path)
    proxy = standing(control.parent)
    if proxy is not None:
        proxy.heal()  # waits until applied
    elif control.exists():  # it is not running: it starts healed anyway
        version = int((_read(control) or {}).get("version", 0)) + 1
        _write(control, {"version": version, "faults": asdict(Faults())})


def _read(path: Path) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    return None


def _write(path: Path, data: dict[str, Any]) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(data))
    part.replace(path)
