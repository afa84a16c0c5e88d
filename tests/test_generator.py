"""The demo event generator: deterministic, realistic, valid against the demo protos."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from workbench.dev.generator import (
    HOTSPOTS,
    MESSAGES,
    METRO,
    Generator,
    encode,
    malformed_bytes,
    nearest_area,
    write_jsonl,
)
from workbench.exceptions import UnknownNameError
from workbench.schemas import default_registry

pytestmark = pytest.mark.unit

START = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def km_between(lat1: float, long1: float, lat2: float, long2: float) -> float:
    x = (long2 - long1) * math.cos(math.radians((lat1 + lat2) / 2))
    return 111.0 * math.hypot(lat2 - lat1, x)


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_same_seed_same_events_whatever_is_asked_first(kind):
    alone = Generator(seed=7, start=START).take(kind, 500)
    mixed = Generator(seed=7, start=START)
    for other in MESSAGES:
        mixed.take(other, 37)
    assert Generator(seed=7, start=START).take(kind, 500) == alone
    assert mixed.take(kind, 0) == [] and Generator(seed=8, start=START).take(kind, 500) != alone
    split = Generator(seed=7, start=START)
    assert split.take(kind, 200) + split.take(kind, 300) == alone


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_events_are_their_messages_in_json_form(kind):
    registry = default_registry()
    cls = registry.message_class(MESSAGES[kind])
    for event in Generator(seed=3, start=START, late_fraction=0.1, out_of_order_seconds=5).take(
        kind, 300
    ):
        message = cls.FromString(encode(event, MESSAGES[kind], registry))
        back = json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        stamp = message.event_timestamp.ToDatetime(tzinfo=UTC)
        assert stamp == when(back["event_timestamp"]) == when(event["event_timestamp"])
        back["event_timestamp"] = event["event_timestamp"]
        if "latency_ms" in back:
            back["latency_ms"] = int(back["latency_ms"])
        assert back == event
        assert ISO.match(event["event_timestamp"])


def test_event_times_trail_the_clock_by_the_jitter_or_by_minutes_when_late():
    gen = Generator(seed=1, start=START, rate_per_s=50, late_fraction=0.05, out_of_order_seconds=4)
    lags = [
        (arrival - when(e["event_timestamp"])).total_seconds()
        for arrival, e in gen.timed("api_logs", 4000)
    ]
    late = [lag for lag in lags if lag > 4.001]
    assert all(lag >= -0.001 for lag in lags)
    assert 0.035 * 4000 < len(late) < 0.065 * 4000
    assert all(120 - 0.001 <= lag <= 900 + 0.001 for lag in late)
    timed = gen.timed("bookings", 2000)
    assert all(a <= b for (a, _), (b, _) in zip(timed, timed[1:], strict=False))
    assert timed[-1][0] - timed[0][0] == pytest.approx(timedelta(seconds=40), rel=0.15)


def test_in_order_when_no_jitter_is_asked():
    events = Generator(seed=2, start=START, rate_per_s=20).take("driver_pings", 1000)
    stamps = [when(e["event_timestamp"]) for e in events]
    assert stamps == sorted(stamps) and stamps[0] >= START


def test_places_cluster_around_jakarta_hotspots():
    bookings = Generator(seed=4, start=START).take("bookings", 3000)
    points = {(b["pickup_lat"], b["pickup_long"], b["service_area_id"]) for b in bookings}
    assert all(
        METRO[0] <= lat <= METRO[1] and METRO[2] <= lng <= METRO[3] for lat, lng, _ in points
    )
    near = [p for p in points if min(km_between(p[0], p[1], h.lat, h.long) for h in HOTSPOTS) < 4.0]
    assert 0.75 < len(near) / len(points) < 0.95
    areas = Counter(area for _, _, area in points)
    assert set(areas) == {h.service_area_id for h in HOTSPOTS}
    assert areas.most_common(1)[0][0] == 2  # Sudirman/SCBD is the busiest
    pings = Generator(seed=4, start=START).take("driver_pings", 2000)
    assert all(p["service_area_id"] == nearest_area(p["lat"], p["long"]) for p in pings)


def test_orders_move_through_their_lifecycle():
    bookings = Generator(seed=5, start=START, rate_per_s=40).take("bookings", 20000)
    steps = defaultdict(list)
    for b in bookings:
        steps[b["order_number"]].append(b)
    order = ["CREATED", "DRIVER_FOUND", "PICKED_UP", "COMPLETED"]
    created = [events for events in steps.values() if events[0]["status"] == "CREATED"]
    assert len(created) > 1000
    for events in created:
        statuses = [e["status"] for e in events]
        if statuses[-1] == "CANCELLED":
            statuses = statuses[:-1]
        assert statuses == order[: len(statuses)]
        assert len({(e["customer_id"], e["amount"], e["service_type"]) for e in events}) == 1
        assert events[0]["driver_id"] == "" and all(e["driver_id"] for e in events[2:])
    food = [b for b in bookings if b["service_type"] == "GO_FOOD"]
    assert food and all(1 <= len(b["items"]) <= 4 for b in food)
    rides = [b for b in bookings if b["service_type"] in ("GO_RIDE", "GO_CAR")]
    assert all(b["items"] == [] for b in rides)
    assert all(b["vehicle_type"] == "CAR" for b in bookings if b["service_type"] == "GO_CAR")


def test_flow_is_steady_from_the_first_minute():
    bookings = Generator(seed=6, start=START, rate_per_s=100).take("bookings", 12000)
    first = Counter(
        b["status"] for b in bookings if when(b["event_timestamp"]) < START + timedelta(minutes=1)
    )
    assert first["COMPLETED"] > 0.8 * first["CREATED"] > 1000
    share = Counter(b["status"] for b in bookings)
    assert share["CANCELLED"] / len(bookings) == pytest.approx(0.035, abs=0.01)


def test_payments_follow_completed_bookings():
    gen = Generator(seed=9, start=START, rate_per_s=20)
    bookings, payments = gen.take("bookings", 8000), gen.take("payments", 1000)
    completed = {b["order_number"]: b for b in bookings if b["status"] == "COMPLETED"}
    matched = [p for p in payments if p["order_number"] in completed]
    assert len(matched) > 600
    for p in matched:
        booking = completed[p["order_number"]]
        delay = when(p["event_timestamp"]) - when(booking["event_timestamp"])
        assert timedelta(seconds=5) <= delay <= timedelta(seconds=180)
        assert (p["amount"], p["customer_id"]) == (booking["amount"], booking["customer_id"])
    methods = Counter(p["method"] for p in payments)
    statuses = Counter(p["status"] for p in payments)
    assert methods["WALLET"] > methods["CASH"] > methods["CARD"] > 50
    assert 0.85 < statuses["SUCCESS"] / len(payments) < 0.99
    assert all(p["status"] == "SUCCESS" for p in payments if p["method"] == "CASH")
    assert len({p["payment_id"] for p in payments}) == len(payments)


def test_api_logs_have_a_few_percent_of_server_errors():
    logs = Generator(seed=10, start=START).take("api_logs", 20000)
    errors = [log for log in logs if log["status_code"] >= 500]
    assert 0.02 < len(errors) / len(logs) < 0.05
    assert all(log["latency_ms"] >= 5000 for log in errors if log["status_code"] == 504)
    ok = sorted(log["latency_ms"] for log in logs if log["status_code"] < 400)
    assert 10 <= ok[len(ok) // 2] <= 60 and ok[int(len(ok) * 0.99)] > 150
    posts = [log for log in logs if log["method"] == "POST" and log["status_code"] < 400]
    assert posts and all(log["status_code"] == 201 for log in posts)


def test_malformed_bytes_never_parse():
    registry = default_registry()
    rng = random.Random(0)
    for _ in range(500):
        data = malformed_bytes(rng)
        for message in MESSAGES.values():
            with pytest.raises(DecodeError):
                registry.message_class(message).FromString(data)


def test_encoded_mixes_in_the_malformed_fraction():
    registry = default_registry()
    gen = Generator(seed=12, start=START, malformed_fraction=0.1)
    payloads = gen.encoded("payments", 2000)
    cls = registry.message_class(MESSAGES["payments"])
    bad = 0
    for data in payloads:
        try:
            assert cls.FromString(data).order_number
        except DecodeError:
            bad += 1
    assert 140 < bad < 260
    assert (
        Generator(seed=12, start=START, malformed_fraction=0.1).encoded("payments", 2000)
        == payloads
    )


def test_write_jsonl_round_trips(tmp_path):
    events = Generator(seed=13, start=START).take("bookings", 250)
    assert write_jsonl(tmp_path / "b.jsonl", events) == 250
    lines = (tmp_path / "b.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == events


def test_unknown_kind_lists_the_kinds():
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown event kind 'booking'.*Did you mean "
        r"bookings",
    ):
        Generator().take("booking", 1)
