"""A job's letter index: one dead letter per (topic, partition, offset), whatever the checkpoint.

Spark's batch ids and a dead-letter sink's replay markers are per checkpoint, so they
say nothing across checkpoints: an edit, a rollback and a failover each start a new
checkpoint that reads records again (a handoff starts where every open window is
recomputed whole, :mod:`workbench.jobs.handoff`), and their undecodable records would be
lettered again. What a job has lettered must live beside the letters themselves, in the
dead-letter sink, where every checkpoint of the job finds it: a dead-letter writer loads
it before it writes (from the folder's files, or the topic's ``dlq.*`` headers), passes
only the letters of places not in it (:meth:`Lettered.fresh`), and adds what it wrote
once the write committed, so the index is exactly what the sink holds.

A place is the record's (topic, partition, offset) where it was read, kept with its Kafka
timestamp. A mirror (MirrorMaker 2, identity replication policy) keeps topic, partition
and timestamp, and for a topic mirrored from its start also the offsets; a record read
again after a failover is then the same place with the same timestamp, and skipped. At a
known place with another timestamp (a mirror whose offsets drifted) the record is another
one: it is written, never lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

Place = tuple[str, int, int]  # topic, partition, offset

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def place_of(letter: dict[str, Any]) -> Place:
    return str(letter["topic"]), int(letter["partition"]), int(letter["offset"])


def micros(stamp: datetime | None) -> int | None:
    """A Kafka timestamp as epoch microseconds (the letters' unit), exactly."""
    if stamp is None:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return (stamp - _EPOCH) // timedelta(microseconds=1)


class Lettered:
    """The places a job's dead-letter sink holds a letter of: place -> (timestamp in epoch
    microseconds, the part of the sink holding it, e.g. a batch folder)."""

    def __init__(self) -> None:
        self._known: dict[Place, tuple[int | None, str]] = {}

    def __len__(self) -> int:
        return len(self._known)

    def holds(self, letter: dict[str, Any]) -> bool:
        """Whether the sink holds ``letter`` already: its place, with its timestamp."""
        known = self._known.get(place_of(letter))
        return known is not None and known[0] == micros(letter.get("kafka_timestamp"))

    def fresh(self, letters: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The letters the sink does not hold yet."""
        return (letter for letter in letters if not self.holds(letter))

    def add(self, letter: dict[str, Any], part: str = "") -> None:
        """Record ``letter`` as held by the sink (call it once the write committed)."""
        self._known[place_of(letter)] = (micros(letter.get("kafka_timestamp")), part)

    def forget(self, part: str) -> None:
        """Drop what ``part`` held (it is about to be written again: a replayed batch)."""
        self._known = {k: v for k, v in self._known.items() if v[1] != part}

    def known(self) -> list[dict[str, Any]]:
        """The held places as letter fields (topic, partition, offset, kafka_timestamp):
        what a Spark writer joins its letters against."""
        return [
            {
                "topic": topic,
                "partition": partition,
                "offset": offset,
                "kafka_timestamp": None if t is None else _EPOCH + timedelta(microseconds=t),
            }
            for (topic, partition, offset), (t, _) in self._known.items()
        ]
