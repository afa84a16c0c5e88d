"""The host folder: how the supervisor and one shared Spark application talk, through files.

A cluster with ``jobs_per_app: N`` (N > 1) runs the jobs of a team as streaming queries of
shared Spark applications, up to N each (:mod:`workbench.jobs.hosting`). Each application
is one process, ``python -m workbench.jobs.host HOST_DIR``, whose folder
``$STATE/hosts/<host_id>/`` holds (writer in brackets):

- ``host.json`` [supervisor, before spawn]: host_id, team, cluster, spark_master,
  heartbeat_s, spark_conf (the cluster's, :class:`HostConfig`);
- ``pid`` [supervisor, after spawn]: the process's pid, to find it again after a restart;
- ``log`` [the host's stdout and stderr: its Spark driver's log and its own lines];
- ``heartbeat.json`` [host, every heartbeat_s]: pid, time, runs (the run ids it hosts);
- ``runs/<run_id>`` [supervisor]: one file per run handed to the host, holding the run
  folder's path. A hosted run then talks through its own run folder exactly as a run
  process does (:mod:`workbench.jobs.rundir`): its heartbeat's pid is the host's, its
  ``log`` has the run's own lines (the Spark driver's are in the host's log), and
  ``KILL`` beside ``STOP`` asks it to stop now rather than after its micro-batch (a
  signal would reach every run of the host);
- ``STOP`` [supervisor]: take no more runs; end once the hosted runs have ended.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workbench.jobs.rundir import read_json, write_json

HOST_JSON = "host.json"
PID = "pid"
LOG = "log"
HEARTBEAT = "heartbeat.json"
RUNS = "runs"
STOP = "STOP"


@dataclass(frozen=True)
class HostConfig:
    """``host.json``: what one shared application is."""

    host_id: str
    team: str
    cluster: str
    spark_master: str | None = None
    heartbeat_s: float = 2.0
    #: the cluster's Spark settings (resources, conf), under the host's own
    spark_conf: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HostConfig:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class HostDir:
    """One shared application's folder; both sides use it (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"HostDir({str(self.path)!r})"

    @property
    def log(self) -> Path:
        return self.path / LOG

    @property
    def runs(self) -> Path:
        return self.path / RUNS

    # --- supervisor side ---
    def write_config(self, config: HostConfig) -> None:
        self.runs.mkdir(parents=True, exist_ok=True)
        write_json(self.path / HOST_JSON, asdict(config))

    def write_pid(self, pid: int) -> None:
        write_json(self.path / PID, pid)

    def read_pid(self) -> int | None:
        pid = read_json(self.path / PID)
        return pid if isinstance(pid, int) else None

    def assign(self, run_id: str, run_dir: str | Path) -> None:
        """Hand the run whose folder is ``run_dir`` to the host (atomically)."""
        tmp = self.runs / f".{run_id}.tmp"
        tmp.write_text(str(run_dir), encoding="utf-8")
        os.replace(tmp, self.runs / run_id)

    def request_stop(self) -> None:
        self.path.joinpath(STOP).touch()

    def read_heartbeat(self) -> dict[str, Any] | None:
        return read_json(self.path / HEARTBEAT)

    # --- host side ---
    def read_config(self) -> HostConfig:
        data = read_json(self.path / HOST_JSON)
        if not isinstance(data, dict):
            raise FileNotFoundError(f"{self.path / HOST_JSON}: missing or not a JSON object")
        return HostConfig.from_dict(data)

    def assigned(self, known: set[str] | frozenset[str] = frozenset()) -> dict[str, Path]:
        """The runs handed to the host so far, but those in ``known``: {run_id: run folder}."""
        try:
            files = [
                p for p in self.runs.iterdir() if not p.name.startswith(".") and p.name not in known
            ]
        except FileNotFoundError:
            return {}
        return {p.name: Path(p.read_text(encoding="utf-8").strip()) for p in sorted(files)}

    def stop_requested(self) -> bool:
        return self.path.joinpath(STOP).exists()

    def write_heartbeat(self, runs: list[str]) -> None:
        write_json(self.path / HEARTBEAT, {"pid": os.getpid(), "time": time.time(), "runs": runs})
