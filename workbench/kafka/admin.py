"""Kafka admin calls: create, delete and list topics, the brokers a cluster lists now.

Production code (sinks, sources, the job service) and the dev brokers share these; nothing
here starts a broker (that is :mod:`workbench.dev.kafka`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from workbench.exceptions import WorkbenchError

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

#: The logger librdkafka's clients of the workbench log through (``"logger": LOG``).
LOG = logging.getLogger("workbench.kafka")
LOG.addHandler(logging.NullHandler())


def create_topics(
    bootstrap: str,
    topics: Mapping[str, int],
    replication: int = -1,
    timeout: float = 30.0,
    config: Mapping[str, str] | None = None,
) -> None:
    """Create each topic with its partition count (and topic ``config``, e.g.
    ``cleanup.policy``); topics that already exist are fine. ``replication`` -1 is the
    cluster's ``default.replication.factor`` (1 on the single dev broker, 3 on a 3-node
    one: a sink's commit topic must survive a broker as its data does).

    Returns once every topic's partitions have a leader, so producers can write at once.
    """
    from confluent_kafka.admin import NewTopic

    if not topics:
        return
    admin = admin_client(bootstrap)
    new = [
        NewTopic(name, num_partitions=n, replication_factor=replication, config=dict(config or {}))
        for name, n in topics.items()
    ]
    futures = admin.create_topics(new, request_timeout=timeout)
    _settle(futures, bootstrap, "create", tolerated="TOPIC_ALREADY_EXISTS", timeout=timeout)
    _wait_for(admin, bootstrap, lambda md: all(_has_leaders(md, name) for name in topics), timeout)


def delete_topics(bootstrap: str, names: Iterable[str], timeout: float = 30.0) -> None:
    """Delete the topics; topics that do not exist are fine. Returns once they are gone."""
    names = list(names)
    if not names:
        return
    admin = admin_client(bootstrap)
    futures = admin.delete_topics(names, request_timeout=timeout)
    _settle(futures, bootstrap, "delete", tolerated="UNKNOWN_TOPIC_OR_PART", timeout=timeout)
    _wait_for(admin, bootstrap, lambda md: not set(names) & set(md.topics), timeout)


def list_topics(bootstrap: str, timeout: float = 10.0) -> list[str]:
    """Names of the topics on the broker, without internal ones (``__consumer_offsets``...)."""
    metadata = _metadata(admin_client(bootstrap), bootstrap, timeout)
    return sorted(name for name in metadata.topics if not name.startswith("__"))


def broker_ids(bootstrap: str, timeout: float = 5.0) -> set[int]:
    """Node ids of the brokers the cluster's metadata lists now (empty if none answers)."""
    from confluent_kafka import KafkaException

    try:
        return set(admin_client(bootstrap).list_topics(timeout=timeout).brokers)
    except KafkaException:
        return set()


def admin_client(bootstrap: str) -> AdminClient:
    """An admin client for ``bootstrap``, logging through :data:`LOG`."""
    from confluent_kafka.admin import AdminClient

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": LOG}
    return AdminClient(conf)


def _metadata(admin: AdminClient, bootstrap: str, timeout: float):
    from confluent_kafka import KafkaException

    try:
        return admin.list_topics(timeout=timeout)
    except KafkaException as err:
        raise WorkbenchError(
            f"No Kafka broker answers at {bootstrap} ({err.args[0].str()}). "
            "Is it running? `workbench dev kafka up` starts one on a dev box."
        ) from err


def _settle(futures: Mapping, bootstrap: str, verb: str, tolerated: str, timeout: float) -> None:
    from confluent_kafka import KafkaError

    for name, future in futures.items():
        try:
            # exception(), not result(): a raised error would tie the client into a cycle
            # that keeps it (and its reconnect messages) alive until the next gc
            error = future.exception(timeout)
        except TimeoutError:
            raise WorkbenchError(
                f"Kafka at {bootstrap} did not {verb} topic '{name}' within {timeout:.0f}s."
            ) from None
        if error is not None and error.args[0].code() != getattr(KafkaError, tolerated):
            raise WorkbenchError(
                f"Could not {verb} Kafka topic '{name}' on {bootstrap}: {error.args[0].str()}"
            )


def _wait_for(admin: AdminClient, bootstrap: str, done, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done(_metadata(admin, bootstrap, timeout)):
        if time.monotonic() >= deadline:
            raise WorkbenchError(f"Kafka at {bootstrap} did not apply the topic change in time.")
        time.sleep(0.1)


def _has_leaders(metadata, name: str) -> bool:
    topic = metadata.topics.get(name)
    if topic is None or topic.error is not None or not topic.partitions:
        return False
    return all(p.leader >= 0 and p.error is None for p in topic.partitions.values())
