"""A job process for tests: a run folder as the supervisor makes it, and the runner spawned
the way the supervisor spawns it (own process group, output into the run's ``log``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from workbench.jobs.rundir import RunConfig, RunDir


def make_run(
    root: Path, spec_yaml: str, checkpoint: Path, handoff=None, version=1, master="local[2]"
) -> RunDir:
    run_id = f"t-{uuid.uuid4().hex[:6]}"
    run = RunDir(root / "runs" / run_id)
    config = RunConfig(
        run_id=run_id,
        job_id=1,
        job="test",
        team="pricing",
        version=version,
        checkpoint=str(checkpoint),
        handoff=handoff,
        heartbeat_s=1.0,
        spark_master=master,
    )
    run.write_run_config(config, spec_yaml)
    return run


class Process:
    """``python -m workbench.jobs.runner RUN_DIR`` in its own session."""

    def __init__(self, run: RunDir, env: dict[str, str] | None = None):
        self.run = run
        with run.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "workbench.jobs.runner", str(run.path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=run.path,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )

    def log(self) -> str:
        return self.run.log.read_text(errors="replace") if self.run.log.exists() else ""

    def wait_for(self, predicate, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            assert self.proc.poll() is None, (
                f"runner exited while waiting for {what}:\n" + (self.log()[-3000:])
            )
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}:\n" + self.log()[-3000:])

    def exit_code(self, timeout_s: float) -> int:
        """Wait for the process to end by itself (killed if it does not)."""
        try:
            return self.proc.wait(timeout_s)
        finally:
            self.kill()

    def stop(self, timeout_s: float = 120) -> int:
        self.run.request_stop()
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(30)
