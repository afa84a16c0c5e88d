"""Which Kafka cluster answers at some bootstrap servers: its cluster id and live brokers.

Kafka gives every cluster a random id when its storage is formatted; the id tells a
cluster from its mirror even when both hold the same topics, which is what a checkpoint
(:mod:`workbench.streaming.checkpoints`), ``workbench kafka-clusters show`` and the failover watch
ask. Client options are librdkafka's (the Java-only ``sasl.jaas.config`` is refused by
it: such a cluster cannot be asked from Python).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.exceptions import KafkaUnreachableError

#: librdkafka's own messages (connection refused...) go here rather than to stderr.
LOG = logging.getLogger(__name__)
LOG.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class ClusterIdentity:
    cluster_id: str
    brokers: int  # brokers the cluster's metadata lists now


def describe(
    bootstrap: str, options: Mapping[str, str] | None = None, timeout_s: float = 10.0
) -> ClusterIdentity:
    """The cluster at ``bootstrap`` (with client ``options``, secrets already resolved);
    :class:`KafkaUnreachableError` when it cannot be asked within ``timeout_s``."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    conf: dict[str, Any] = {**(options or {}), "bootstrap.servers": bootstrap, "logger": LOG}
    try:
        admin = AdminClient(conf)
        found = admin.describe_cluster(request_timeout=timeout_s).result(timeout_s)
    except KafkaException as err:
        raise KafkaUnreachableError(bootstrap, err.args[0].str()) from None
    except (ValueError, TypeError, TimeoutError) as err:
        raise KafkaUnreachableError(bootstrap, str(err) or type(err).__name__) from None
    return ClusterIdentity(found.cluster_id, len(found.nodes))
