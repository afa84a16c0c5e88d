"""The ledger: produced per window, made again from the seed, equals what the real broker
holds; planted losses and duplicates are listed by window and fail the verdict."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import datetime

from confluent_kafka import Consumer
from google.protobuf import json_format

from workbench.chaos.ledger import balance, produced_windows, window_of
from workbench.chaos.load import LoadPlan, drive
from workbench.generator import MESSAGES
from workbench.schemas.registry import default_registry

WINDOW_S = 2.0


def windows_on_topic(bootstrap: str, topic: str, count: int) -> Counter[int]:
    """Event-time windows of the ``count`` bookings ``topic`` holds, decoded."""
    message = default_registry().message_class(MESSAGES["bookings"])
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    counts: Counter[int] = Counter()
    try:
        while sum(counts.values()) < count:
            got = consumer.poll(10)
            assert got is not None, f"only {sum(counts.values())} of {count} records"
            event = json_format.MessageToDict(message.FromString(got.value()))
            stamp = datetime.fromisoformat(event["eventTimestamp"].replace("Z", "+00:00"))
            counts[window_of(stamp.timestamp(), WINDOW_S)] += 1
    finally:
        consumer.close()
    return counts


def test_produced_windows_match_the_topic_and_plants_are_listed(kafka_broker):
    topic = f"ledger-{uuid.uuid4().hex[:8]}"
    plan = LoadPlan(topic, "bookings", rate=200, duration_s=3, seed=11)
    result = drive(kafka_broker.bootstrap, plan)
    start = datetime.fromisoformat(result.started_at)
    produced = produced_windows("bookings", 11, start, 200, plan.count, WINDOW_S)
    on_topic = windows_on_topic(kafka_broker.bootstrap, topic, plan.count)
    assert on_topic == produced and sum(produced.values()) == 600
    ledger = balance(produced, on_topic, WINDOW_S)
    assert ledger.passed and ledger.verdict().startswith("pass")

    first, second, *_ = sorted(produced)
    landed = Counter(on_topic)
    landed[first] -= 3  # lost ...
    landed[second] += 2  # ... doubled ...
    dead = {second: 1}  # ... and a dead letter on top
    ledger = balance(produced, landed, WINDOW_S, dead)
    assert [(r.missing, r.duplicates) for r in ledger.lost] == [(3, 0)]
    assert [(r.missing, r.duplicates, r.dead_letters) for r in ledger.doubled] == [(0, 3, 1)]
    report = ledger.as_dict()
    assert report["totals"]["missing"] == 3 and report["totals"]["duplicates"] == 3
    assert not report["passed"] and report["verdict"].startswith("fail: 1 window(s) lost")
