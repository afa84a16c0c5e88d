"""The ``validate`` checks of a spec, run for the job service before it stores or starts it.

``workbench validate`` plans and starts the spec's query over empty inputs in Spark
(:mod:`workbench.streaming.validate`): a misspelt column, a sink that cannot take the
query's columns or an alert rule naming no column is refused there, not found by a run
that restarts until ``FAILED``. The job service keeps no JVM of its own: each check is a
short-lived process (``python -m workbench.jobs.spec_check``, the service config's
``validate_command``) reading the spec on its standard input and answering one JSON line,
``{"ok": true}`` or ``{"ok": false, "type": ..., "message": ...}``; :func:`check` raises
the refusal as :class:`~workbench.exceptions.SpecRefusedError` with ``validate``'s message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence

from workbench.exceptions import SpecRefusedError, WorkbenchError

#: the longest a check may take (a cold JVM on a loaded machine takes 20-60 s); under
#: the clients' request timeout (:class:`workbench.client.rest.RestClient`, 180 s)
TIMEOUT_S = 150.0


def check(
    command: Sequence[str],
    spec_yaml: str,
    env: Mapping[str, str],
    job: str,
    timeout_s: float = TIMEOUT_S,
) -> None:
    """Run ``command`` on ``spec_yaml``; SpecRefusedError with validate's message when
    the spec would not run. An empty ``command`` checks nothing (the service config then
    checks names and schemas only, without Spark)."""
    if not command:
        return
    try:
        done = subprocess.run(
            list(command),
            input=spec_yaml,
            capture_output=True,
            text=True,
            env=dict(env),
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SpecRefusedError(
            job, f"the spec's check did not finish in {timeout_s:.0f} s; try again"
        ) from None
    answer = _answer(done.stdout)
    if answer.get("ok"):
        return
    message = answer.get("message") or _tail(done.stderr) or f"exit code {done.returncode}"
    raise SpecRefusedError(job, str(message), str(answer.get("type") or ""))


def _answer(stdout: str) -> dict:
    for line in reversed(stdout.splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and "ok" in found:
            return found
    return {"ok": False}


def _tail(text: str, lines: int = 5) -> str:
    return " ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def main() -> int:
    """The check's process: the spec on standard input, one JSON line out."""
    from workbench.kinds import KINDS
    from workbench.runtime.spark_errors import summary, text_of
    from workbench.yamlsafe import load_text

    try:
        KINDS.check(KINDS.parse(load_text(sys.stdin.read(), "spec"), "spec"))
    except WorkbenchError as err:
        print(json.dumps({"ok": False, "type": type(err).__name__, "message": str(err)}))
        return 1
    except Exception as err:  # noqa: BLE001 - Spark's own errors, as one paragraph
        message = summary(text_of(err))
        print(json.dumps({"ok": False, "type": type(err).__name__, "message": message}))
        return 1
    print(json.dumps({"ok": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
