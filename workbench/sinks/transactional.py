"""Exactly-once micro-batches into Kafka: one transaction per batch, with a commit marker.

Spark replays a micro-batch whose outcome it did not record. Writing a batch's records
and a marker ``(query, batch)`` to the commit topic in *one* Kafka transaction makes the
replay detectable: a batch at or below the last committed marker of the same streaming
query is skipped. Markers are keyed by transactional id *and* query (batch ids restart
with every checkpoint), so a new checkpoint's batches are written, and an older
checkpoint resumed after a newer one still finds its own last marker. Consumers that
read with ``isolation.level=read_committed`` therefore see every batch exactly once,
whatever crashed and whenever. The transactional id is stable per job and sink, so a
restarted job fences its dead predecessor and aborts the transaction it left open.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.exceptions import SinkError
from workbench.kafka.admin import LOG, create_topics

COMMIT_TOPIC = "_dagger_sink_commits"
Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]  # key, value, headers


class TransactionalWriter:
    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        transactional_id: str,
        options: Mapping[str, str] | None = None,
        timeout_s: float = 60.0,
        partitions: int = 1,
    ):
        from confluent_kafka import Producer

        self.topic, self.transactional_id, self.timeout_s = topic, transactional_id, timeout_s
        self.bootstrap_servers = bootstrap_servers
        self._name = f"kafka sink '{topic}'"
        config = {
            "bootstrap.servers": bootstrap_servers,
            "transactional.id": transactional_id,
            "enable.idempotence": True,
            # the transaction is open while Spark computes the batch's rows (they stream in
            # from toLocalIterator); the coordinator aborts one open longer than this, and the
            # producer is then fenced. librdkafka's 60 s is too short for a big batch on a
            # busy machine; 5 minutes stays under the brokers' 15-minute maximum.
            "transaction.timeout.ms": 300_000,
            "linger.ms": 20,
            "compression.type": "lz4",
            "logger": LOG,
            **dict(options or {}),
        }
        _ensure_topics(bootstrap_servers, topic, partitions)
        self._failures: list[str] = []
        self._producer = Producer(config)
        try:
            self._producer.init_transactions(timeout_s)
        except Exception as err:  # KafkaException: broker unreachable or fenced
            raise SinkError(
                self._name, f"cannot start a transaction at {bootstrap_servers}: {err}"
            ) from None
        self._committed = last_commits(bootstrap_servers, transactional_id)

    def committed(self, query_id: str, batch_id: int) -> bool:
        """True when this query's batch (or a later one) is already in Kafka."""
        return self._committed.get(query_id, -1) >= batch_id

    def write(self, records: Iterable[Record], query_id: str, batch_id: int) -> int:
        """Write one micro-batch atomically; a batch already committed is skipped (0)."""
        from confluent_kafka import KafkaException

        if self.committed(query_id, batch_id):
            return 0
        marker = {"query": query_id, "batch": batch_id}
        count = 0
        try:
            self._producer.begin_transaction()
            for key, value, headers in records:
                self._produce(self.topic, key, value, headers)
                count += 1
            marker_id = marker_key(self.transactional_id, query_id)
            self._produce(COMMIT_TOPIC, marker_id, json.dumps(marker).encode(), [])
            self._producer.commit_transaction(self.timeout_s)
        except KafkaException as err:
            self._abort()
            cause = self._failures[0] if self._failures else str(err)
            raise SinkError(
                self._name, f"the transaction for batch {batch_id} failed: {cause}"
            ) from None
        self._committed[query_id] = batch_id
        return count

    def _produce(self, topic: str, key: Any, value: Any, headers: list) -> None:
        while True:
            try:
                self._producer.produce(
                    topic, value=value, key=key, headers=headers or None, on_delivery=self._report
                )
                return
            except BufferError:  # the local queue is full: let deliveries drain
                self._producer.poll(0.1)

    def _report(self, err: Any, msg: Any) -> None:
        if err is not None and len(self._failures) < 10:
            self._failures.append(f"{err.str()} (topic {msg.topic()})")

    def _abort(self) -> None:
        with contextlib.suppress(Exception):  # the original error is the one to report
            self._producer.abort_transaction(self.timeout_s)

    def close(self) -> None:
        """Deliver what is queued. A producer in a fatal state (fenced: the batch that found
        out has already failed with the reason) raises from ``flush``, inside its delivery
        callback (confluent-kafka then reports a ``SystemError``): logged, not raised, so
        closing never hides the batch's own error."""
        try:
            self._producer.flush(self.timeout_s)
        except Exception as err:  # KafkaException or that SystemError
            LOG.warning("%s: closing the producer: %s", self._name, err)


def _ensure_topics(bootstrap_servers: str, topic: str, partitions: int) -> None:
    """The target topic (``partitions`` if new) and the compacted commit-marker topic."""

    create_topics(bootstrap_servers, {topic: partitions})
    create_topics(bootstrap_servers, {COMMIT_TOPIC: 1}, config={"cleanup.policy": "compact"})


def marker_key(transactional_id: str, query_id: str) -> bytes:
    """The commit topic's key of one query's markers (the topic is compacted per key)."""
    return f"{transactional_id}|{query_id}".encode()


def last_commits(bootstrap_servers: str, transactional_id: str) -> dict[str, int]:
    """The last committed batch of each query writing as ``transactional_id``
    (read_committed). Markers keyed by the transactional id alone (earlier versions)
    count for the query they name."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": f"{transactional_id}-marker-reader",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "logger": LOG,
        }
    )
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(COMMIT_TOPIC, 0), timeout=30)
        found: dict[str, int] = {}
        if high <= low:
            return found
        consumer.assign([TopicPartition(COMMIT_TOPIC, 0, OFFSET_BEGINNING)])
        key, prefix = transactional_id.encode(), marker_key(transactional_id, "")
        while True:
            msg = consumer.poll(30.0)
            if msg is None:  # never guess: a missed marker would write a batch twice
                raise SinkError("kafka commit markers", f"no answer reading {COMMIT_TOPIC}")
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    break
                raise SinkError("kafka commit markers", str(error))
            mine = msg.key() == key or (msg.key() or b"").startswith(prefix)
            if mine and msg.value() is not None:
                marker = json.loads(msg.value() or b"null")
                found[str(marker["query"])] = int(marker["batch"])
        return found
    finally:
        consumer.close()
