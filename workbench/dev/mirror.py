"""MirrorMaker 2 for a dev box: one dedicated MM2 process mirroring a source Kafka cluster's
topics and consumer-group offsets into a target cluster.

The process is Apache Kafka's own ``org.apache.kafka.connect.mirror.MirrorMaker`` from
``org.apache.kafka:connect-mirror`` (Maven Central, via :mod:`workbench.runtime.maven`), run
with a generated ``mm2.properties`` and ``--clusters TARGET`` (only the flows into the
target run here). Like the dev broker it is detached: it outlives the process that
started it and any process stops it through the pid file in its state folder.

Replication policy: identity (``IdentityReplicationPolicy``). A topic keeps its name on
the target, so a dagger's spec reads the same ``topics`` on either cluster and only its
servers change on failover; the default policy would rename ``booking-log`` to
``SOURCE.booking-log`` on the target. Identity suits one-way disaster recovery (this
module enables only source -> target); it cannot tell a mirrored record from a local one,
so two clusters must not mirror the same topics both ways.

MM2 writes the translated offsets of the mirrored groups (``groups``, a regex) to
``SOURCE.checkpoints.internal`` on the target every second
(:mod:`workbench.kafka.mm2` reads them).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from workbench.dev.detached import Detached
from workbench.dev.kafka import KAFKA_VERSION, java, jvm_options, tail_lines
from workbench.exceptions import SetupError
from workbench.kafka.admin import list_topics
from workbench.paths import subdir
from workbench.runtime.maven import fetch

COORDINATES = (
    f"org.apache.kafka:connect-mirror:{KAFKA_VERSION}",
    "org.slf4j:slf4j-reload4j:1.7.36",
)
MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
_LOG4J = """log4j.rootLogger=WARN, stdout
log4j.logger.org.apache.kafka.connect.mirror=INFO
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
_STARTED = "--- workbench starting MirrorMaker 2"
LAYOUT = "mirror.json"  # what `workbench dev mirror up` started, for status and down


def mirror_jars() -> list[Path]:
    """MirrorMaker 2's jars (connect-mirror and its dependencies), fetched on first use."""
    return fetch("kafka-mirror", COORDINATES)


@dataclass(frozen=True)
class Side:
    """One end of the mirror: the cluster's alias in ``mm2.properties`` and its servers."""

    alias: str
    bootstrap: str


@dataclass(frozen=True)
class MirrorStatus:
    running: bool
    pid: int | None
    source: Side
    target: Side
    state_dir: Path
    log_file: Path


class Mirror:
    """MM2 copying ``topics`` (a regex) and the offsets of ``groups`` (a regex) from
    ``source`` to ``target``; internal topics get ``replication`` replicas."""

    def __init__(
        self,
        source: Side,
        target: Side,
        state_dir: Path | None = None,
        *,
        topics: str = ".*",
        groups: str = ".*",
        replication: int = 1,
    ):
        self.source, self.target = source, target
        self.topics, self.groups, self.replication = topics, groups, replication
        self.state_dir = Path(state_dir) if state_dir is not None else subdir("mirror")
        self.log_file = self.state_dir / "mirror.log"
        self.properties_file = self.state_dir / "mm2.properties"
        self._pid_file = self.state_dir / "mirror.pid"
        self._log4j = self.state_dir / "log4j.properties"
        self._process = Detached(self._pid_file, marker=str(self.properties_file))

    @classmethod
    def existing(cls, state_dir: Path | None = None) -> Mirror | None:
        """The mirror last started from ``state_dir`` (None: none was)."""
        folder = Path(state_dir) if state_dir is not None else subdir("mirror")
        try:
            data = json.loads((folder / LAYOUT).read_text())
        except (OSError, ValueError):
            return None
        return cls(
            Side(**data["source"]), Side(**data["target"]), folder,
            topics=data["topics"], groups=data["groups"], replication=data["replication"],
        )  # fmt: skip

    def properties(self) -> str:
        """The ``mm2.properties`` this mirror runs with."""
        src, dst, rf = self.source.alias, self.target.alias, self.replication
        lines = [
            f"clusters = {src}, {dst}",
            f"{src}.bootstrap.servers = {self.source.bootstrap}",
            f"{dst}.bootstrap.servers = {self.target.bootstrap}",
            f"{src}->{dst}.enabled = true",
            f"{src}->{dst}.topics = {self.topics}",
            f"{src}->{dst}.groups = {self.groups}",
            f"{dst}->{src}.enabled = false",
            f"replication.policy.class = {IDENTITY}",
            "tasks.max = 1",
            # every internal topic and each mirrored topic: as many replicas as asked
            *(
                f"{key} = {rf}"
                for key in (
                    "replication.factor",
                    "checkpoints.topic.replication.factor",
                    "heartbeats.topic.replication.factor",
                    "offset-syncs.topic.replication.factor",
                    "offset.storage.replication.factor",
                    "status.storage.replication.factor",
                    "config.storage.replication.factor",
                )
            ),
            # dev timings: new topics and groups seen in 2 s, checkpoints every second,
            # an offset sync for every record (exact translations on a small stream)
            "refresh.topics.interval.seconds = 2",
            "refresh.groups.interval.seconds = 2",
            "emit.checkpoints.interval.seconds = 1",
            "emit.heartbeats.interval.seconds = 1",
            "offset.lag.max = 0",
            # delayed offset syncs (MM2 throttles them under load) go out every second
            "offset.flush.interval.ms = 1000",
            # the workbench translates offsets itself at failover (RemoteClusterUtils-style)
            "sync.group.offsets.enabled = false",
            "sync.topic.acls.enabled = false",
        ]
        return "\n".join(lines) + "\n"

    def status(self) -> MirrorStatus:
        pid = self._live_pid()
        return MirrorStatus(
            pid is not None, pid, self.source, self.target, self.state_dir, self.log_file
        )

    def start(self, timeout: float = 120.0) -> MirrorStatus:
        """Start MM2 (or find it running) and wait until it heartbeats into the target."""
        pid = self._live_pid()
        if pid is None:
            pid = self._launch()
        self._wait_ready(pid, timeout)
        return self.status()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop MM2 (SIGTERM, SIGKILL after ``timeout``); nothing to do if stopped."""
        self._process.stop(timeout)

    def _launch(self) -> int:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.properties_file.write_text(self.properties())
        layout = {
            "source": asdict(self.source), "target": asdict(self.target),
            "topics": self.topics, "groups": self.groups, "replication": self.replication,
        }  # fmt: skip
        (self.state_dir / LAYOUT).write_text(json.dumps(layout))
        self._log4j.write_text(_LOG4J)
        classpath = os.pathsep.join(str(jar) for jar in mirror_jars())
        cmd = [
            java(), *jvm_options(), f"-Dlog4j.configuration={self._log4j.as_uri()}",
            "-cp", classpath, MAIN_CLASS, str(self.properties_file),
            "--clusters", self.target.alias,
        ]  # fmt: skip
        flow = f"{self.source.alias} -> {self.target.alias}"
        header = f"{_STARTED} {flow} at {datetime.now()}"
        return self._process.spawn(cmd, self.log_file, self.state_dir, header)

    def _wait_ready(self, pid: int, timeout: float) -> None:

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._process.alive(pid):
                raise SetupError(
                    f"MirrorMaker 2 ({self.state_dir}) exited while starting. The end of "
                    f"{self.log_file}:\n{self._log_tail()}"
                )
            if "heartbeats" in list_topics(self.target.bootstrap):
                return
            time.sleep(0.5)
        raise SetupError(
            f"MirrorMaker 2 (pid {pid}) wrote no heartbeat into {self.target.bootstrap} "
            f"within {timeout:.0f}s. The end of {self.log_file}:\n{self._log_tail()}"
        )

    def _live_pid(self) -> int | None:
        return self._process.live_pid()

    def _log_tail(self) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return tail_lines(text.rpartition(_STARTED)[2])
