"""Where the Spark JVM's output goes: stderr (the CLI) or a log file (notebooks).

PySpark starts the JVM as a child process that writes log4j lines, JVM warnings
(``Using incubator modules``) and Java stacks to the stderr it inherits; PySpark's own
error loggers (``SQLQueryContextLogger``...) print the whole Java stack of every analysis
error as JSON on stderr too. In a notebook each of these shows as a red box above the
workbench's one-line error.

:func:`to_file` (the notebook kernel calls it) sends all of that to a file instead, for a
JVM started afterwards: ``$WORKBENCH_HOME/logs/spark-<pid>.log``, one per kernel, read with
:func:`tail` (``wb.spark_log()``, ``%dagger_logs``). ``$WORKBENCH_SPARK_LOG`` overrides:
``stderr`` keeps everything on stderr as before, any other value is the file to use (in
the CLI too).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.paths import subdir
from workbench.settings import settings, variable

ENV = variable("spark_log")
STDERR = "stderr"
#: PySpark's Python loggers that print Java stacks on stderr.
PYSPARK_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
#: log4j level for a JVM logging to a file (stderr: ERROR), unless $WORKBENCH_SPARK_LOG_LEVEL.
FILE_LEVEL = "WARN"

_state: dict[str, Path | None] = {}


def to_file(path: str | Path | None = None) -> Path | None:
    """Send the output of a JVM started from now on to ``path`` (default: this process's
    file under ``$WORKBENCH_HOME/logs``), unless ``$WORKBENCH_SPARK_LOG`` says otherwise.
    Returns the file, or None when the output stays on stderr."""
    chosen = settings().spark_log
    if chosen == STDERR:
        _state["file"] = None
    elif chosen:
        _state["file"] = Path(chosen).expanduser()
    else:
        _state["file"] = Path(path) if path is not None else default_file()
    return _state["file"]


def default_file() -> Path:

    return subdir("logs") / f"spark-{os.getpid()}.log"


def current() -> Path | None:
    """The file the JVM's output goes to (None: stderr): as :func:`to_file` set it, else
    ``$WORKBENCH_SPARK_LOG`` when it names a file (the CLI)."""
    if "file" in _state:
        return _state["file"]
    chosen = settings().spark_log
    return Path(chosen).expanduser() if chosen and chosen != STDERR else None


@contextlib.contextmanager
def started() -> Iterator[tuple[str, dict[str, Any]]]:
    """Around starting the JVM: yields the log4j level to set once it runs, and the
    ``Popen`` arguments that send its stdout and stderr to :func:`current` (if set; none
    otherwise), for :func:`pyspark.java_gateway.launch_gateway`. Only the JVM's output
    moves: this process's own stdout and stderr stay where they are, so a start in a
    background thread does not take the output of whatever runs meanwhile."""
    target = current()
    if target is None:
        yield "ERROR", {}
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    _route_pyspark_loggers(target)
    with target.open("ab") as log:
        yield FILE_LEVEL, {"stdout": log, "stderr": log}


def _route_pyspark_loggers(target: Path) -> None:
    from pyspark.logger import PySparkLogger

    for name in PYSPARK_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.FileHandler(target, encoding="utf-8"))
        logger.propagate = False


def hush_pyspark_loggers() -> None:
    """PySpark logs every analysis error with its whole Java stack before raising it; the
    workbench reports each in one line. Those logs go to the log file when there is one
    (:func:`started` routed them), stay on stderr when ``$WORKBENCH_SPARK_LOG=stderr``
    asks for them, and are off otherwise (the CLI)."""
    from pyspark.logger import PySparkLogger

    asked = settings().spark_log == STDERR
    for name in PYSPARK_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        routed = any(isinstance(h, logging.FileHandler) for h in logger.handlers)
        logger.disabled = not (routed or asked)


def tail(lines: int = 50) -> str:
    """The last ``lines`` lines of the JVM's log file."""
    target = current()
    if target is None:
        return f"the Spark JVM logs to stderr (${ENV}={STDERR})"
    if not target.exists():
        return f"{target}: nothing logged yet (Spark starts on first use)"
    text = target.read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join([f"{target} (last {min(lines, len(text))} lines)", *text[-lines:]])
