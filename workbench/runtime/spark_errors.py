"""A Spark (JVM) error as one paragraph a user can act on, instead of a py4j trace.

A streaming query's failure arrives as pages of JVM text: wrapper exceptions
(``FOREACH_BATCH_USER_FUNCTION_ERROR``, ``STREAM_FAILED``), a Python traceback from
inside ``foreachBatch``, ``Caused by`` chains and stack frames. :func:`summary` keeps
what matters: a workbench error raised inside the batch (its own message says what to
do), else the innermost Spark error condition and its message, else the first line.
"""

from __future__ import annotations

import re

#: Spark conditions that only wrap the real cause.
WRAPPERS = {"FOREACH_BATCH_USER_FUNCTION_ERROR", "STREAM_FAILED"}

_WORKBENCH = re.compile(r"^workbench\.[\w.]+\.\w+(?:Error|Exception): (.+)$")
_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\] (.+)")
_PREFIX = re.compile(r"^(?:[\w$]+\.)+[\w$]+: ")  # org.apache.spark.SparkException:
_LIMIT = 600


def text_of(err: BaseException) -> str:
    """The whole text of a pyspark / py4j / workbench error."""
    detail = getattr(err, "detail", None) or getattr(err, "desc", None)
    java = getattr(err, "java_exception", None)
    if not detail and java is not None:
        try:
            detail = java.toString() + "\n" + "\n".join(str(line) for line in java.getStackTrace())
        except Exception:  # noqa: BLE001 - the gateway may be gone
            detail = None
    return str(detail or err)


def summary(text: str) -> str:
    """One paragraph (no newlines) for a JVM error text."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        raised = _WORKBENCH.match(line)
        if raised:
            return _cap(raised.group(1))
    conditions = [m for line in lines if (m := _CONDITION.search(line))]
    real = [m for m in conditions if m.group(1).split(".")[0] not in WRAPPERS]
    if real:
        found = real[-1]
        message = re.split(r" SQLSTATE: ", found.group(2))[0]
        return _cap(f"[{found.group(1)}] {message}")
    first = _PREFIX.sub("", lines[0]) if lines else "unknown error"
    return _cap(first)


def _cap(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LIMIT else text[: _LIMIT - 3] + "..."
