"""The ``validate`` checks of a spec, run for the job service before it stores or starts it.

``workbench validate`` plans and starts the spec's query over empty inputs in Spark
(:mod:`workbench.streaming.validate`): a misspelt column, a sink that cannot take the
query's columns or an alert rule naming no column is refused there, not found by a run
that restarts until ``FAILED``. The job service keeps no JVM in its own process: a
:class:`Checker` keeps one check process warm (``python -m workbench.jobs.spec_check
--serve``, the service config's ``validate_command``), so only the first check pays for
the JVM's start and later ones take about a second. It reads one JSON line per spec,
``{"spec": ...}``, and answers one, ``{"ok": true}`` or ``{"ok": false, "type": ...,
"message": ...}``; it ends on its own after :data:`IDLE_S` without a check (the next one
starts another). :meth:`Checker.check` raises a refusal as
:class:`~workbench.exceptions.SpecRefusedError` with ``validate``'s message.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from workbench.exceptions import SpecRefusedError, WorkbenchError

#: the longest a check may take (a cold JVM on a loaded machine takes 20-60 s); under
#: the clients' request timeout (:class:`workbench.client.rest.RestClient`, 180 s)
TIMEOUT_S = 150.0
#: a check process with no check for this long ends, giving its memory back
IDLE_S = 600.0


class Checker:
    """One warm check process for all of a service's checks, one check at a time.

    An empty ``command`` checks nothing (the service config then checks names and
    schemas only, without Spark)."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str]):
        self.command, self.env = list(command), dict(env)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None

    def check(self, spec_yaml: str, job: str, timeout_s: float = TIMEOUT_S) -> None:
        """SpecRefusedError with validate's message when ``spec_yaml`` would not run."""
        if not self.command:
            return
        with self._lock:
            answer = self._ask(spec_yaml, job, timeout_s)
        if not answer.get("ok"):
            message = answer.get("message") or "the check ended without an answer"
            raise SpecRefusedError(job, str(message), str(answer.get("type") or ""))

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _ask(self, spec_yaml: str, job: str, timeout_s: float) -> dict[str, Any]:
        proc = self._running()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"spec": spec_yaml}) + "\n")
            proc.stdin.flush()
        except OSError:  # it ended (idle) just now: once more, with a new one
            self._stop()
            return self._ask(spec_yaml, job, timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                self._stop()
                raise SpecRefusedError(
                    job, f"the spec's check did not finish in {timeout_s:.0f} s; try again"
                )
            line = proc.stdout.readline()
            if not line:  # the process died: what it said last is the reason
                said = self._said()
                self._stop()
                return {"ok": False, "message": said}
            found = _answer(line)
            if "ok" in found:
                return found

    def _running(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - kept with the process
            self._proc = subprocess.Popen(
                [*self.command, "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                env=self.env,
            )
        return self._proc

    def _said(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return _tail(self._stderr.read())

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    pipe.close()
        if self._stderr is not None:
            self._stderr.close()
        self._proc, self._stderr = None, None


def check(
    command: Sequence[str],
    spec_yaml: str,
    env: Mapping[str, str],
    job: str,
    timeout_s: float = TIMEOUT_S,
) -> None:
    """One check in a process of its own (:class:`Checker` keeps one for many)."""
    checker = Checker(command, env)
    try:
        checker.check(spec_yaml, job, timeout_s)
    finally:
        checker.close()


def _answer(line: str) -> dict[str, Any]:
    """The answer on ``line``, or {} (a line something else printed)."""
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _tail(text: str, lines: int = 5) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def main() -> int:
    """The check process: one JSON line per spec on standard input (``--serve``: until it
    closes or :data:`IDLE_S` pass without one; else one spec as plain YAML), one JSON
    answer line each."""
    if "--serve" not in sys.argv[1:]:
        return 0 if _check_one(sys.stdin.read())["ok"] else 1
    while select.select([sys.stdin], [], [], IDLE_S)[0]:
        line = sys.stdin.readline()
        if not line:
            break
        _check_one(json.loads(line)["spec"])
    return 0


def _check_one(spec_yaml: str) -> dict[str, Any]:
    from workbench.kinds import KINDS
    from workbench.runtime.spark_errors import summary, text_of
    from workbench.yamlsafe import load_text

    try:
        KINDS.check(KINDS.parse(load_text(spec_yaml, "spec"), "spec"))
        answer: dict[str, Any] = {"ok": True}
    except WorkbenchError as err:
        answer = {"ok": False, "type": type(err).__name__, "message": str(err)}
    except Exception as err:  # noqa: BLE001 - Spark's own errors, as one paragraph
        answer = {"ok": False, "type": type(err).__name__, "message": summary(text_of(err))}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return answer


if __name__ == "__main__":
    sys.exit(main())
