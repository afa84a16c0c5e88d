"""A running Spark streaming query, waited on: until its micro-batch in flight is done."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery


def wait_idle(
    query: StreamingQuery, timeout_s: float = 120.0, give_up: Callable[[], bool] | None = None
) -> None:
    """Let ``query``'s running micro-batch finish (so stopping it does not cancel its Spark
    job): return once no trigger is active, the query has ended, ``timeout_s`` has passed
    or ``give_up()`` is true."""
    deadline = time.monotonic() + timeout_s
    while query.isActive and time.monotonic() < deadline and not (give_up and give_up()):
        if not query.status.get("isTriggerActive"):
            return
        time.sleep(0.1)
