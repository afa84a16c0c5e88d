"""A job's restart offsets, committed to its consumer group after each micro-batch.

Spark's Kafka source commits no consumer group: its offsets live in the checkpoint. For a
failover (:mod:`workbench.jobs.failover`) MirrorMaker 2 must translate the job's position
onto the mirror, and MM2 translates consumer groups only. So after each micro-batch the
job commits, to the group ``workbench-JOB`` on each stream's cluster, the offsets where a
new checkpoint continuing this one would start (the handoff rule of
:mod:`workbench.jobs.handoff`, not the batch's end: a new checkpoint on the mirror must
recompute the windows still open). Commits run in a thread of their own (a dying cluster
never holds up a batch); one still running is not queued again, and a failure is said once
in the run's log, never raised.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import WorkbenchError
from workbench.jobs import handoff
from workbench.jobs.failover import group_of
from workbench.kafka.identity import LOG

if TYPE_CHECKING:
    from workbench.spec import DaggerSpec, StreamSpec


class GroupCommits:
    def __init__(self, spec: DaggerSpec, checkpoint: str | Path, job: str, say: Callable):
        self.spec, self.checkpoint, self.group = spec, Path(checkpoint), group_of(job)
        self._say = say
        self._said: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="group-commits")
        self._running: Future | None = None
        self._consumers: dict[str, Any] = {}

    def after_batch(self) -> None:
        """Commit the current restart offsets, unless the last commit is still running."""
        if self._running is None or self._running.done():
            self._running = self._pool.submit(self.commit)

    def commit(self) -> dict[str, dict[str, dict[str, int]]]:
        """Commit now; returns what was committed ({table: {topic: {partition: offset}}})."""

        try:
            plan = handoff.plan(self.checkpoint, self.spec, self.spec)
        except WorkbenchError:
            return {}  # no committed batch yet
        done = {}
        for stream in self.spec.streams:
            offsets = plan["starting_offsets"].get(stream.table)
            if offsets and self._commit(stream, offsets):
                done[stream.table] = offsets
        return done

    def _commit(self, stream: StreamSpec, offsets: dict[str, dict[str, int]]) -> bool:
        from confluent_kafka import KafkaException, TopicPartition

        parts = [
            TopicPartition(topic, int(p), int(o))
            for topic, partitions in offsets.items()
            for p, o in partitions.items()
            if int(o) >= 0
        ]
        try:
            self._consumer(stream).commit(offsets=parts, asynchronous=False)
        except (KafkaException, ValueError, TypeError) as err:
            text = f"offsets of '{stream.table}' not committed to group {self.group}: {err}"
            if text not in self._said:
                self._said.add(text)
                self._say(text + " (a failover would start earlier on the mirror)")
            return False
        return True

    def _consumer(self, stream: StreamSpec) -> Any:
        from confluent_kafka import Consumer

        key = stream.bootstrap_servers
        if key not in self._consumers:
            conf = {
                **stream.kafka_options,
                "bootstrap.servers": stream.bootstrap_servers,
                "group.id": self.group,
                "enable.auto.commit": False,
                "logger": LOG,
            }
            self._consumers[key] = Consumer(conf)
        return self._consumers[key]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for consumer in self._consumers.values():
            consumer.close()
        self._consumers.clear()
