"""A real single-node Apache Kafka (KRaft: broker and controller in one JVM) for a dev box.

The broker runs from Maven Central jars, not a Kafka download. It is detached from
Python: it outlives the process that started it, and any process can stop it through
the pid file in its state directory. Topics are made with :mod:`workbench.kafka.admin`.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.dev.detached import Detached
from workbench.dev.ports import HOST, port_taken
from workbench.exceptions import SetupError
from workbench.kafka.admin import admin_client
from workbench.paths import PACKAGE_DIR, subdir
from workbench.runtime.maven import fetch
from workbench.runtime.spark import quick_jit_asked
from workbench.settings import settings

if TYPE_CHECKING:
    pass

KAFKA_VERSION = "3.9.2"
#: Kafka 3.9 logs through slf4j 1.7; reload4j is the log4j 1.x its distribution ships.
COORDINATES = (f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}", "org.slf4j:slf4j-reload4j:1.7.36")
JVM_OPTIONS = ("-Xms256m", "-Xmx768m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20")
#: With ``$WORKBENCH_JIT=quick`` (the test suite): C1 only and the serial collector, for
#: brokers and tools that live seconds to minutes over little data. A broker then starts on
#: 3 CPU-seconds instead of 5 and idles on 2.3 CPU-seconds a minute instead of 2.8.
QUICK_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
SERVER_PROPERTIES = PACKAGE_DIR / "data" / "kafka-server.properties"
_LOG4J = """log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
_STARTED = "--- workbench starting Kafka"
#: librdkafka's own messages (connection refused...) go here rather than to stderr.


def broker_jars() -> list[Path]:
    """The broker's jars, fetched from Maven Central on first use."""
    return fetch("kafka-broker", COORDINATES)


@dataclass(frozen=True)
class BrokerStatus:
    """``running``: the broker's process is alive (it may still be starting up)."""

    running: bool
    pid: int | None
    bootstrap: str
    state_dir: Path
    log_file: Path


@dataclass(frozen=True)
class ClusterNode:
    """A broker's place in a KRaft cluster: its ``node.id``, the controller quorum
    (``controller.quorum.voters``), the cluster id its storage is formatted with (None: a
    new random one) and the replication factor of the internal topics."""

    node_id: int
    voters: str
    cluster_id: str | None
    replication: int


class Broker:
    """A Kafka broker on ``127.0.0.1:port`` keeping its data and logs in ``state_dir``.

    ``advertised_port`` (default ``port``) is where the broker's metadata tells clients to
    connect: a chaos scenario puts a fault proxy there (workbench/chaos/proxy.py) that
    forwards to ``port``, so every client connection goes through the proxy."""

    def __init__(
        self,
        state_dir: Path | None = None,
        port: int = 9092,
        controller_port: int = 9093,
        *,
        node: ClusterNode | None = None,
        advertised_port: int | None = None,
    ):
        self.advertised_port = advertised_port or port
        self.state_dir = Path(state_dir) if state_dir is not None else subdir("kafka")
        self.port, self.controller_port = port, controller_port
        self.node = node or ClusterNode(1, f"1@{HOST}:{controller_port}", None, 1)
        self.log_file = self.state_dir / "broker.log"
        self._pid_file = self.state_dir / "broker.pid"
        self._properties = self.state_dir / "server.properties"
        self._log4j = self.state_dir / "log4j.properties"
        self._process = Detached(self._pid_file, marker=str(self._properties))

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    def status(self) -> BrokerStatus:
        """Whether the broker's process is alive; cheap, asks the broker nothing."""
        pid = self._live_pid()
        return BrokerStatus(pid is not None, pid, self.bootstrap, self.state_dir, self.log_file)

    def start(self, timeout: float = 90.0) -> BrokerStatus:
        """Start the broker (or find it running) and wait until it answers metadata requests."""
        pid, launched = self.launch()
        try:
            self.wait_ready(pid, timeout)
        except SetupError:
            if launched:
                self.stop()
            raise
        return self.status()

    def launch(self) -> tuple[int, bool]:
        """Start the broker's process without waiting for it (a cluster's nodes only answer
        once a quorum of them runs). Returns its pid and whether it was started now."""
        pid = self._live_pid()
        if pid is not None:
            self._check_ports_of_running()
            return pid, False
        self._pid_file.unlink(missing_ok=True)
        return self._launch(), True

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the broker down cleanly (SIGKILL after ``timeout``); nothing to do if stopped."""
        self._process.stop(timeout)

    def kill(self) -> None:
        """SIGKILL the broker, as a crash would; the stale pid file stays behind."""
        self._process.kill()

    def _live_pid(self) -> int | None:
        return self._process.live_pid()

    def _check_ports_of_running(self) -> None:
        ours = (
            f"listeners=PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}"
        )
        if ours not in self._properties.read_text():
            raise SetupError(
                f"A Kafka broker already runs from {self.state_dir} on other ports (see "
                f"{self._properties}). Stop it first, or give this Broker the same ports."
            )

    def _launch(self) -> int:
        for port in (self.port, self.controller_port):
            if port_taken(port):
                raise SetupError(
                    f"Port {port} on {HOST} is taken by another process (another Kafka?). "
                    "Give the broker other ports: Broker(port=..., controller_port=...)."
                )
        self._write_config()
        classpath = os.pathsep.join(str(jar) for jar in broker_jars())
        self._format_storage(classpath)
        cmd = [java(), *jvm_options(), *self._log_options(), "-cp", classpath, "kafka.Kafka"]
        header = f"{_STARTED} {KAFKA_VERSION} on {self.bootstrap} at {datetime.now()}"
        return self._process.spawn(
            [*cmd, str(self._properties)], self.log_file, self.state_dir, header
        )

    def _write_config(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        data_dir = self.state_dir / "data"
        template = SERVER_PROPERTIES.read_text()
        text = template.format(
            port=self.port,
            advertised_port=self.advertised_port,
            controller_port=self.controller_port,
            data_dir=data_dir,
            node_id=self.node.node_id,
            voters=self.node.voters,
            replication=self.node.replication,
            min_isr=min(2, self.node.replication),
        )
        self._properties.write_text(text)
        self._log4j.write_text(_LOG4J)

    def _log_options(self) -> list[str]:
        return [f"-Dlog4j.configuration={self._log4j.as_uri()}", "-Djava.awt.headless=true"]

    def _format_storage(self, classpath: str) -> None:
        if (self.state_dir / "data" / "meta.properties").exists():
            return
        cluster_file = self.state_dir / "cluster.id"
        if self.node.cluster_id:
            cluster_file.write_text(self.node.cluster_id)
        elif not cluster_file.exists():
            cluster_file.write_text(random_cluster_id())
        cluster_id = cluster_file.read_text().strip()
        tool = ["kafka.tools.StorageTool", "format", "--ignore-formatted", "-t", cluster_id]
        cmd = [java(), *jvm_options(tool=True), *self._log_options(), "-cp", classpath, *tool]
        proc = subprocess.run([*cmd, "-c", str(self._properties)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SetupError(
                f"Could not format Kafka storage in {self.state_dir / 'data'}:\n"
                + tail_lines(proc.stdout + proc.stderr)
            )

    def wait_ready(self, pid: int, timeout: float) -> None:
        """Wait until the broker (process ``pid``) answers metadata requests."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._process.alive(pid):
                raise SetupError(
                    f"The Kafka broker for {self.state_dir} exited while starting. "
                    f"The end of {self.log_file}:\n{self._log_tail()}"
                )
            if _answers(self.bootstrap):
                return
            time.sleep(0.2)
        raise SetupError(
            f"The Kafka broker (pid {pid}) did not answer on {self.bootstrap} within "
            f"{timeout:.0f}s. "
            f"The end of {self.log_file}:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        head, marker, run = text.rpartition(_STARTED)
        return tail_lines(run.partition("\n")[2] if marker else text, lines)


def _answers(bootstrap: str) -> bool:
    """Whether a broker answers metadata requests (a port probe first keeps librdkafka quiet)."""
    from confluent_kafka import KafkaException

    try:
        socket.create_connection((HOST, int(bootstrap.rpartition(":")[2])), timeout=1).close()
        return bool(admin_client(bootstrap).list_topics(timeout=2).brokers)
    except (OSError, KafkaException):
        return False


def random_cluster_id() -> str:
    """A Kafka ``Uuid`` string, as ``kafka-storage.sh random-uuid`` prints it."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def jvm_options(tool: bool = False) -> tuple[str, ...]:
    """A Kafka JVM's options: a server's :data:`JVM_OPTIONS` (a tool's: none); with
    ``$WORKBENCH_JIT=quick`` (:attr:`workbench.settings.Settings.jit`), the same heap with
    :data:`QUICK_JVM_OPTIONS` instead of G1."""

    if not quick_jit_asked():
        return () if tool else JVM_OPTIONS
    memory = () if tool else tuple(o for o in JVM_OPTIONS if o.startswith("-Xm"))
    return (*memory, *QUICK_JVM_OPTIONS)


def java() -> str:
    home = settings().java_home
    java = str(home / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise SetupError(
            "Java 17+ is needed to run Kafka: apt-get install openjdk-17-jre-headless."
        )
    return java


def tail_lines(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty)"
