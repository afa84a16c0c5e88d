"""The run folder: how the supervisor and one job process talk, through files only.

``$STATE/runs/<run_id>/`` holds (writer in brackets):

- ``run.json`` [supervisor, before spawn]: run_id, job_id, job, team, version, spec
  (``spec.yaml``), checkpoint, handoff (null or {starting_offsets, min_rowtime}),
  heartbeat_s, spark_master, cluster, spark_conf (:class:`RunConfig`);
- ``spec.yaml`` [supervisor]: the version's spec, secrets as unresolved references;
- ``log`` [runner's stdout and stderr, opened by the supervisor];
- ``heartbeat.json`` [runner, atomically every heartbeat_s and after each batch]:
  pid, time, state (STARTING, RUNNING, STOPPING), started_at, metrics;
- ``progress.jsonl`` [runner]: one JSON object per micro-batch, the last 200 kept;
- ``alerts.jsonl`` [runner, when the spec has metric alert rules]: one line per
  micro-batch, ``{batch_id, checkpoint, time, observations}`` (:mod:`workbench.alerts.observe`;
  ``error`` instead when the rules could not be evaluated), at least the last 1000 kept;
- ``STOP`` [supervisor]: stop after the current micro-batch;
- ``KILL`` [supervisor]: with ``STOP``, stop now, not after the micro-batch: the escalation
  of a run of a shared application (a run process gets SIGTERM and SIGKILL instead), and
  at once for a run whose Kafka cluster the supervisor failed over from (its batch waits
  on the cluster that is gone);
- ``exit.json`` [runner, last]: code, reason (stopped, failed), error, time. Missing
  after the process is gone means it was killed.

Every JSON file is replaced atomically (written beside, then renamed), so a reader never
sees half a file.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RUN_JSON = "run.json"
SPEC = "spec.yaml"
LOG = "log"
HEARTBEAT = "heartbeat.json"
PROGRESS = "progress.jsonl"
STOP = "STOP"
KILL = "KILL"
EXIT = "exit.json"
PROGRESS_KEPT = 200
ALERTS = "alerts.jsonl"
ALERTS_KEPT = 1000
STATES = ("STARTING", "RUNNING", "STOPPING")

# runner exit codes; EXIT_INVALID: failed on an error no retry mends (the spec's, or
# credentials refused: :mod:`workbench.runtime.errors`), so the job is FAILED at once
EXIT_STOPPED, EXIT_FAILED, EXIT_LEASE_HELD, EXIT_INVALID = 0, 1, 3, 4


@dataclass(frozen=True)
class RunConfig:
    """``run.json``: what one run of a job version is."""

    run_id: str
    job_id: int
    job: str
    team: str
    version: int
    checkpoint: str
    spec: str = SPEC
    handoff: dict[str, Any] | None = None
    heartbeat_s: float = 2.0
    spark_master: str | None = None
    #: the cluster's name and its Spark settings (resources, conf); the spec's come on top
    cluster: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    #: the schema version the job version is pinned to and its descriptor set file
    #: (:mod:`workbench.jobs.schema_pins`); None: the bundled schemas
    schema_version: int | None = None
    schema_set: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys a newer supervisor added

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "extra"}
        rest = {k: v for k, v in data.items() if k not in cls.__dataclass_fields__}
        return cls(**known, extra=rest)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {**data.pop("extra"), **data}


def write_json(path: Path, data: Any) -> None:
    """``data`` as JSON into ``path``, atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=None, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    """The JSON in ``path``; None when it does not exist (or is not JSON yet)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


class RunDir:
    """One run's folder; both sides use it (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._alert_lines = 0  # appended since the alerts file was last cut

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    # --- paths ---
    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    @property
    def spec_file(self) -> Path:
        return self.path / SPEC

    @property
    def log(self) -> Path:
        return self.path / LOG

    @property
    def heartbeat_file(self) -> Path:
        return self.path / HEARTBEAT

    @property
    def progress_file(self) -> Path:
        return self.path / PROGRESS

    @property
    def alerts_file(self) -> Path:
        return self.path / ALERTS

    @property
    def stop_file(self) -> Path:
        return self.path / STOP

    @property
    def exit_file(self) -> Path:
        return self.path / EXIT

    # --- supervisor side ---
    def write_run_config(self, config: RunConfig | dict[str, Any], spec_yaml: str) -> None:
        """Create the folder with ``run.json`` and ``spec.yaml`` (before spawning)."""
        self.path.mkdir(parents=True, exist_ok=True)
        data = config.to_dict() if isinstance(config, RunConfig) else dict(config)
        data.setdefault("spec", SPEC)
        (self.path / data["spec"]).write_text(spec_yaml, encoding="utf-8")
        write_json(self.run_json, data)

    def request_stop(self) -> None:
        self.stop_file.touch()

    def request_kill(self) -> None:
        (self.path / KILL).touch()

    def read_heartbeat(self) -> dict[str, Any] | None:
        return read_json(self.heartbeat_file)

    def read_exit(self) -> dict[str, Any] | None:
        return read_json(self.exit_file)

    def read_alerts_after(self, offset: int = -1) -> list[dict[str, Any]]:
        """The ``alerts.jsonl`` lines whose ``batch_id`` is above ``offset`` (a batch id, as
        the reader's cursor keeps it; -1: every line kept), oldest first."""
        return [r for r in _read_lines(self.alerts_file) if int(r.get("batch_id", -1)) > offset]

    def tail_progress(self, n: int = 20) -> list[dict[str, Any]]:
        """The last ``n`` progress records, oldest first."""
        return _read_lines(self.progress_file)[-n:] if n > 0 else []

    # --- runner side ---
    def read_run_config(self) -> RunConfig:
        data = read_json(self.run_json)
        if not isinstance(data, dict):
            raise FileNotFoundError(f"{self.run_json}: missing or not a JSON object")
        return RunConfig.from_dict(data)

    def read_spec_yaml(self, config: RunConfig | None = None) -> str:
        name = config.spec if config else SPEC
        return (self.path / name).read_text(encoding="utf-8")

    def write_heartbeat(
        self, state: str, started_at: float, metrics: dict[str, Any], pid: int | None = None
    ) -> dict[str, Any]:
        assert state in STATES, state
        beat = {
            "pid": pid or os.getpid(),
            "time": time.time(),
            "state": state,
            "started_at": started_at,
            "metrics": metrics,
        }
        write_json(self.heartbeat_file, beat)
        return beat

    def append_progress(self, record: dict[str, Any]) -> None:
        """Add one micro-batch's record; the file keeps the last :data:`PROGRESS_KEPT`."""
        _append_line(self.progress_file, record, PROGRESS_KEPT)

    def append_alerts(self, record: dict[str, Any]) -> None:
        """Add one micro-batch's observations: appended (lines can be long), the file cut
        to its last :data:`ALERTS_KEPT` lines each time as many more were written."""
        with self.alerts_file.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, default=str) + "\n")
        self._alert_lines += 1
        if self._alert_lines >= ALERTS_KEPT:
            _append_line(self.alerts_file, None, ALERTS_KEPT)
            self._alert_lines = 0

    def stop_requested(self) -> bool:
        return self.stop_file.exists()

    def kill_requested(self) -> bool:
        return (self.path / KILL).exists()

    def write_exit(self, code: int, reason: str, error: str | None = None) -> dict[str, Any]:
        record = {"code": code, "reason": reason, "error": error, "time": time.time()}
        write_json(self.exit_file, record)
        return record


def _append_line(path: Path, record: dict[str, Any] | None, kept: int) -> None:
    """``record`` (None: nothing) as the last line of a JSON Lines file keeping its last
    ``kept`` lines, replaced atomically."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    added = [] if record is None else [json.dumps(record, default=str)]
    lines = [*lines, *added][-kept:]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (none when it is missing; bad lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
