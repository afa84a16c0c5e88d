"""The session's Py4J sockets: Nagle's algorithm off on every connection, both ways."""

from __future__ import annotations

import json
import threading
from pathlib import Path


def _no_delay(spark) -> bool:
    """Whether the Py4J connection serving the calling thread has Nagle's algorithm off (the
    JVM thread answering is the one pinned to this Python thread's connection)."""
    server = spark.sparkContext._gateway.java_gateway_server
    return bool(server.getCallbackClient().getPerThreadConnection().getSocket().getTcpNoDelay())


def test_the_connection_made_before_the_session_started_has_nagle_off(spark):
    assert _no_delay(spark)


def test_a_python_thread_started_later_gets_a_connection_with_nagle_off(spark):
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(_no_delay(spark)))
    thread.start()
    thread.join(60)
    assert seen == [True]


def test_the_jvm_calling_python_back_uses_a_connection_with_nagle_off(spark, tmp_path: Path):
    """foreachBatch: the stream's JVM thread opens a connection to Python and calls back on it."""
    source = tmp_path / "in"
    source.mkdir()
    (source / "rows.json").write_text(json.dumps({"n": 1}) + "\n")
    seen: list[bool] = []

    def each(batch, batch_id: int) -> None:
        seen.append(_no_delay(spark))

    query = (
        spark.readStream.schema("n INT")
        .json(str(source))
        .writeStream.option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .foreachBatch(each)
        .start()
    )
    query.awaitTermination(120)
    assert seen == [True]
