"""Observed metrics of a streaming query's current micro-batch, read inside foreachBatch.

A plan observes a metric (``DataFrame.observe``) wherever it is computed: once a Spark job
has computed the micro-batch (a writer, a count), each metric's value is on the query's
last execution, read here with no further Spark job. The job observes its result's rows
(:data:`RESULT`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.streaming import StreamingQuery

#: The job result's metric: ``rows``, the micro-batch's result rows.
RESULT = "result"


def result_rows() -> Column:
    """The :data:`RESULT` metric's column (``frame.observe(RESULT, result_rows())``)."""
    from pyspark.sql import functions as F

    return F.count(F.lit(1)).alias("rows")


def metrics(query: StreamingQuery, names: Iterable[str]) -> list[Any]:
    """The metrics (JVM rows) called ``names`` of ``query``'s current micro-batch, those
    observed so far (none before a Spark job has computed the batch)."""
    jvm = query._jsq.streamingQuery().lastExecution().observedMetrics()  # type: ignore[attr-defined]
    found = (jvm.get(name) for name in names)
    return [f.get() for f in found if f.isDefined()]


def ran(query: StreamingQuery, names: Iterable[str]) -> bool:
    """Whether ``query``'s current micro-batch has been computed (every metric observed)."""
    names = list(names)
    return len(metrics(query, names)) == len(names)


def count(query: StreamingQuery, name: str, field: str = "rows") -> int:
    """The integer ``field`` of metric ``name``; raises LookupError before it was observed."""
    found = metrics(query, [name])
    if not found:
        raise LookupError(f"metric {name!r} has not been observed in this micro-batch")
    return int(found[0].getAs(field))
