"""Errors no retry mends: which failures of a run fail the same way every time.

A run that fails on the spec itself (its SQL, its schemas, a sink's configuration) or on
credentials a server refuses would fail again after any backoff: the run process exits
with its own code and the supervisor marks the job ``FAILED`` at once, with the error.
Everything else (a broker or a master that does not answer, a killed executor, a sink
server busy) is transient: the run is retried with backoff.

Judged by type, through the chain of causes (``__cause__``, ``__context__``): our own
error classes, and for Spark's errors the Java exception's class and its superclasses
(py4j), e.g. Kafka's ``AuthenticationException`` under a failed streaming query.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workbench.exceptions import (
    CheckpointMismatchError,
    SchemaError,
    SchemaMismatchError,
    SecretError,
    SinkError,
    SpecError,
    SqlError,
    StreamingPlanError,
)

#: our errors that are the spec's (or its schemas', or its secrets') fault
SPEC_ERRORS = (
    SqlError,
    SchemaError,
    SchemaMismatchError,
    SpecError,
    SecretError,
    StreamingPlanError,
    CheckpointMismatchError,
)
#: HTTP statuses of a sink server that mean its settings or credentials are wrong
SINK_REFUSALS = {400, 401, 403, 404}
#: Java classes (or superclasses) of errors no retry mends: credentials refused, and
#: Spark's analysis errors (a column or table its plan cannot resolve)
JAVA_CLASSES = {
    "org.apache.kafka.common.errors.AuthenticationException",
    "org.apache.kafka.common.errors.AuthorizationException",
    "org.apache.spark.sql.AnalysisException",
}


def deterministic(err: BaseException) -> bool:
    """Whether ``err`` (or an error it was raised from) fails every retry the same way."""
    return any(_ours(e) or _java(e) for e in _chain(err))


def _chain(err: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        query = getattr(err, "query_error", None)  # a failed streaming query's own exception
        if isinstance(query, BaseException):
            yield query
        err = err.__cause__ or err.__context__


def _ours(err: BaseException) -> bool:
    if isinstance(err, SinkError):
        return err.status in SINK_REFUSALS
    return isinstance(err, SPEC_ERRORS)


def _java(err: BaseException) -> bool:
    """Whether a pyspark / py4j error's Java exception, or a cause of it, is of a class
    (or subclass of one) in :data:`JAVA_CLASSES`."""
    throwable = getattr(err, "_origin", None) or getattr(err, "java_exception", None)
    seen = 0
    while throwable is not None and seen < 20:
        if _java_classes(throwable) & JAVA_CLASSES:
            return True
        throwable, seen = _call(throwable, "getCause"), seen + 1
    return False


def _java_classes(throwable: Any) -> set[str]:
    names: set[str] = set()
    klass = _call(throwable, "getClass")
    while klass is not None and len(names) < 20:
        name = _call(klass, "getName")
        if not name:
            break
        names.add(str(name))
        klass = _call(klass, "getSuperclass")
    return names


def _call(java: Any, method: str) -> Any:
    try:
        return getattr(java, method)()
    except Exception:  # noqa: BLE001 - the gateway may be gone: nothing more to learn
        return None
