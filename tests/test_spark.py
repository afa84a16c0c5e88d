"""The session's driver JVM as started: its garbage collector, and its Py4J sockets with
Nagle's algorithm off on every connection, both ways."""

from __future__ import annotations

import json
import threading
from pathlib import Path


def _no_delay(spark) -> bool:
    """Whether the Py4J connection serving the calling thread has Nagle's algorithm off (the
    JVM thread answering is the one pinned to this Python thread's connection)."""
    server = spark.sparkContext._gateway.java_gateway_server
    return bool(server.getCallbackClient().getPerThreadConnection().getSocket().getTcpNoDelay())


def _server_sockets(spark) -> list[bool]:
    """Nagle's algorithm off (True) or on, for each connection the gateway server accepted
    (one per Python thread that called the JVM)."""
    server = spark.sparkContext._gateway.java_gateway_server
    field = server.getClass().getSuperclass().getDeclaredField("connections")  # GatewayServer
    field.setAccessible(True)
    return [bool(c.getSocket().getTcpNoDelay()) for c in list(field.get(server))]


def test_every_connection_python_opened_has_nagle_off_the_first_one_too(spark):
    """The main thread's connection was opened before the session's start turned it off."""
    assert _server_sockets(spark)
    assert all(_server_sockets(spark))


def test_python_threads_started_later_get_connections_with_nagle_off(spark):
    """More threads calling the JVM at once than there are connections: new ones open."""
    before = len(_server_sockets(spark))
    called, done = threading.Barrier(before + 2), threading.Event()

    def call() -> None:
        spark.sparkContext._jvm.java.lang.System.nanoTime()  # the thread's own connection
        called.wait(60)
        done.wait(60)

    threads = [threading.Thread(target=call) for _ in range(before + 1)]
    for thread in threads:
        thread.start()
    called.wait(60)
    after = _server_sockets(spark)
    done.set()
    for thread in threads:
        thread.join(60)
    assert len(after) > before
    assert all(after)


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


def test_the_driver_jvm_runs_the_parallel_collector(spark):
    beans = spark._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    assert sorted(bean.getName() for bean in beans) == ["PS MarkSweep", "PS Scavenge"]
