"""The session's driver JVM as started: its garbage collector, its Py4J sockets with
Nagle's algorithm off on every connection, both ways, and its file system committing a
stateful query's checkpoint and a partitioned Parquet write without starting a process."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


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


@contextlib.contextmanager
def _processes_started(spark, folder: Path) -> Iterator[list[str]]:
    """The command lines of the processes the driver JVM starts inside the block (a Flight
    Recorder recording of ``jdk.ProcessStart``, read back when the block ends)."""
    jvm, commands = spark._jvm, []
    recording = jvm.jdk.jfr.Recording()
    recording.enable("jdk.ProcessStart")
    recording.start()
    try:
        yield commands
    finally:
        recording.stop()
        dump = jvm.java.io.File(str(folder / "processes.jfr")).toPath()
        recording.dump(dump)
        recording.close()
        events = jvm.jdk.jfr.consumer.RecordingFile.readAllEvents(dump)
        commands.extend(str(event.getString("command")) for event in events)


def test_committing_checkpoints_state_and_parquet_starts_no_process(spark, tmp_path: Path):
    """Hadoop without its native library runs `readlink` for each rename of the default
    checkpoint manager and `chmod` for each file it creates: ~100 processes a micro-batch of
    the surge dagger (docs/benchmarks.md, item 25). A stateful query's offsets, commits and
    state store deltas, and a partitioned Parquet write, now start none, and the files get
    the permissions Hadoop gives them."""
    source = tmp_path / "in"
    source.mkdir()
    (source / "rows.json").write_text("".join(json.dumps({"k": k % 3}) + "\n" for k in range(9)))
    with _processes_started(spark, tmp_path) as commands:
        counts = spark.readStream.schema("k INT").json(str(source)).groupBy("k").count()
        query = (
            counts.writeStream.format("memory").queryName("committed_counts")
            .outputMode("complete")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )  # fmt: skip
        query.awaitTermination(120)
        spark.range(4).selectExpr("id", "id % 2 AS part").write.partitionBy("part").parquet(
            str(tmp_path / "parquet")
        )
    assert sorted(tuple(r) for r in spark.table("committed_counts").collect()) == [
        (0, 3), (1, 3), (2, 3)
    ]  # fmt: skip
    assert list((tmp_path / "checkpoint" / "state").rglob("*.delta"))
    assert commands == []
    part = next((tmp_path / "parquet").rglob("*.parquet"))
    assert oct(part.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_file_system_jar_joins_the_class_paths_after_yours_and_only_when_used():
    from workbench.runtime.spark import LOCAL_FILES, file_system_classpath
    from workbench.runtime.udf_jar import local_files_jar

    jar = str(local_files_jar())
    mine = {"spark.hadoop.fs.file.impl": LOCAL_FILES, "spark.driver.extraClassPath": "/opt/a.jar"}
    added = file_system_classpath({**mine, "spark.jars": "/opt/b.jar"})
    assert added["spark.driver.extraClassPath"] == f"/opt/a.jar:{jar}"
    assert added["spark.executor.extraClassPath"] == jar
    assert added["spark.jars"] == f"/opt/b.jar,{jar}"
    assert file_system_classpath({**mine, **added}) == added  # never twice
    hadoops = {"spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.LocalFileSystem"}
    assert file_system_classpath(hadoops) == {}


def test_exiting_after_python_tasks_prints_no_accumulator_traceback(tmp_path: Path):
    """Python tasks (``mapInArrow``, as the dead-letter writer uses) connect the JVM to
    PySpark's accumulator server; the JVM's exit ends that connection, and the server printed
    an EOFError traceback as the process exited (when its thread read before Python ended)."""
    import subprocess
    import sys

    script = tmp_path / "python_tasks.py"
    script.write_text(
        "from workbench.runtime.spark import session\n"
        "spark = session(app_name='python-tasks')\n"
        "rows = spark.range(10).mapInArrow(lambda batches: batches, 'id long').collect()\n"
        "print(len(rows))\n"
        "import time, workbench.runtime.spark\n"
        "workbench.runtime.spark.shutdown()  # as at exit, and then time for the server to read\n"
        "time.sleep(2)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.strip().endswith("10")
    assert "EOFError" not in done.stderr and "processing of request" not in done.stderr
