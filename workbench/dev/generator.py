"""Deterministic demo events for a ride-hailing company around Jakarta.

A :class:`Generator` produces, per kind, events in the JSON form of the demo protos
(field names as in the .proto, enums by name, timestamps as ISO-8601 UTC with ``Z``):

* ``bookings``: each order logs CREATED, DRIVER_FOUND, PICKED_UP, COMPLETED (or
  CANCELLED), minutes apart, at pickups clustered around city hotspots;
* ``payments``: one per completed booking, same order_number, seconds to minutes later;
* ``driver_pings``: GPS pings of a fixed pool of drivers moving around the city;
* ``api_logs``: backend requests with log-normal latencies and a few percent of 5xx.

Each kind has its own clock, from ``start``, and its own random stream, so a seed gives the
same events whatever is asked for first. Bookings, pings and api logs arrive ``rate_per_s``
a second; payments at the pace orders complete (about a quarter of that). Event times
trail arrival by up to ``out_of_order_seconds``; ``late_fraction`` of them by 2 to 15
minutes. :func:`encode` turns an event into protobuf bytes, :func:`malformed_bytes` makes
bytes no message parses, and :meth:`Generator.encoded` mixes ``malformed_fraction`` of
those in. int64 fields (``latency_ms``) are plain ints, which protobuf's JSON parser takes.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import heapq
import itertools
import json
import math
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from google.protobuf import json_format

from workbench.exceptions import UnknownNameError

#: event kind -> full name of its message in the bundled demo schemas
MESSAGES: dict[str, str] = {
    "bookings": "esb.booking.BookingLogMessage",
    "payments": "esb.payment.PaymentMessage",
    "driver_pings": "esb.driver.DriverLocationMessage",
    "api_logs": "esb.api.ApiLogMessage",
}


@dataclass(frozen=True)
class Hotspot:
    name: str
    lat: float
    long: float
    sigma_km: float
    weight: float
    service_area_id: int


HOTSPOTS: tuple[Hotspot, ...] = (
    Hotspot("Monas/Thamrin", -6.1862, 106.8230, 1.6, 0.25, 1),
    Hotspot("Sudirman/SCBD", -6.2253, 106.8087, 1.2, 0.30, 2),
    Hotspot("Kemang", -6.2610, 106.8133, 1.4, 0.15, 3),
    Hotspot("Kelapa Gading", -6.1580, 106.9055, 1.8, 0.15, 4),
    Hotspot("Soekarno-Hatta Airport", -6.1256, 106.6558, 1.0, 0.15, 5),
)
_HOTSPOT_WEIGHTS = tuple(itertools.accumulate(h.weight for h in HOTSPOTS))
METRO = (-6.37, -6.09, 106.65, 106.98)  # lat_min, lat_max, long_min, long_max
UNIFORM_FRACTION = 0.15
DRIVERS = 2000
KM_PER_DEGREE = 111.0

_SERVICES = (
    ("GO_RIDE", "BIKE", "RB-"),
    ("GO_CAR", "CAR", "RC-"),
    ("GO_FOOD", "BIKE", "F-"),
    ("GO_SEND", "BIKE", "S-"),
)
_SERVICE_WEIGHTS = (0.45, 0.65, 0.90)  # cumulative shares: ride 45%, car 20%, food 25%, send
_METHODS, _METHOD_WEIGHTS = ("WALLET", "CASH", "CARD"), (0.55, 0.85)
_STATUS = {"CANCELLED_EARLY": "CANCELLED", "CANCELLED_LATE": "CANCELLED"}
_NO_DRIVER = ("CREATED", "CANCELLED_EARLY")
_FARES = {
    "GO_RIDE": (9000, 2500),
    "GO_CAR": (14000, 4000),
    "GO_FOOD": (8000, 2000),
    "GO_SEND": (12000, 3000),
}
_MENU = (
    ("nasi-goreng", "Nasi Goreng", 25000),
    ("sate-ayam", "Sate Ayam", 30000),
    ("es-teh", "Es Teh Manis", 5000),
    ("bakso", "Bakso Malang", 20000),
    ("martabak", "Martabak Manis", 45000),
    ("kopi-susu", "Es Kopi Susu", 22000),
    ("ayam-geprek", "Ayam Geprek", 21000),
    ("mie-ayam", "Mie Ayam", 18000),
)
_PLATFORMS = (("android", "4.62.1"), ("android", "4.61.0"), ("ios", "4.62.0"), ("web", "2.3.9"))
_APIS = (  # service, median latency ms, share of 5xx, (method, path) routes
    ("booking-service", 45.0, 0.03, (("POST", "/v1/bookings"), ("GET", "/v1/bookings/{id}"))),
    ("driver-location", 12.0, 0.02, (("PUT", "/v2/drivers/{id}/location"),)),
    ("payment-gateway", 120.0, 0.05, (("POST", "/v1/payments"), ("GET", "/v1/payments/{id}"))),
    ("pricing", 30.0, 0.02, (("GET", "/v1/estimate"),)),
    ("maps-eta", 60.0, 0.04, (("GET", "/v1/eta"), ("GET", "/v1/route"))),
    ("customer-profile", 20.0, 0.02, (("GET", "/v1/customers/{id}"),)),
)
_DRIVER_STATES = ("AVAILABLE", "BUSY", "OFFLINE")
_CLIENTS = ("android-4.62.1", "android-4.61.0", "ios-4.62.0", "web-2.3.9", "partner-tokopaedi")


class Record(NamedTuple):
    """One generated event as a producer sends it."""

    arrival: datetime
    event: dict[str, Any]
    payload: bytes
    malformed: bool


class Generator:
    """Seeded demo events; the same arguments always give the same events."""

    def __init__(
        self,
        seed: int = 42,
        start: datetime | None = None,
        rate_per_s: float = 100.0,
        late_fraction: float = 0.0,
        out_of_order_seconds: float = 0.0,
        malformed_fraction: float = 0.0,
    ):
        self.seed, self.rate_per_s = seed, float(rate_per_s)
        self.start = (start or datetime(2024, 5, 1, 8, 0, tzinfo=UTC)).astimezone(UTC)
        self.late_fraction, self.out_of_order_seconds = late_fraction, out_of_order_seconds
        self.malformed_fraction = malformed_fraction
        self._streams: dict[str, Iterator[tuple[float, dict[str, Any]]]] = {}
        self._malformed: dict[str, random.Random] = {}

    def take(self, kind: str, n: int) -> list[dict[str, Any]]:
        """The next ``n`` events of ``kind`` (continuing where the last call stopped)."""
        with _no_gc():
            return [event for _, event in itertools.islice(self._stream(kind), n)]

    def timed(self, kind: str, n: int) -> list[tuple[datetime, dict[str, Any]]]:
        """Like :meth:`take`, with the clock time each event arrives (for pacing a producer)."""
        with _no_gc():
            return [
                (datetime.fromtimestamp(t, UTC), e)
                for t, e in itertools.islice(self._stream(kind), n)
            ]

    def encoded(self, kind: str, n: int, registry: Any = None) -> list[bytes]:
        """The next ``n`` events of ``kind`` as protobuf bytes; ``malformed_fraction`` of them
        replaced by bytes that do not parse."""
        return [r.payload for r in self.records(kind, n, registry)]

    def records(self, kind: str, n: int, registry: Any = None) -> list[Record]:
        """The next ``n`` events of ``kind`` with their arrival time and protobuf payload;
        ``malformed_fraction`` of the payloads are bytes that do not parse (``malformed``)."""
        message = MESSAGES[_check_kind(kind)]
        rng = self._malformed.setdefault(kind, self._rng(f"{kind}:malformed"))
        out = []
        for arrival, event in self.timed(kind, n):
            bad = rng.random() < self.malformed_fraction
            payload = malformed_bytes(rng) if bad else encode(event, message, registry)
            out.append(Record(arrival, event, payload, bad))
        return out

    def _stream(self, kind: str) -> Iterator[tuple[float, dict[str, Any]]]:
        if kind not in self._streams:
            self._streams[kind] = _FACTORIES[_check_kind(kind)](self)
        return self._streams[kind]

    def _rng(self, name: str) -> random.Random:
        return random.Random(f"{self.seed}:{name}")

    def _clock(
        self, rng: random.Random, rate: float | None = None, origin: float | None = None
    ) -> Iterator[float]:
        """Arrival times: a Poisson process of ``rate`` (default rate_per_s) from ``origin``
        (default start)."""
        t = self.start.timestamp() if origin is None else origin
        mean = 1.0 / (rate or self.rate_per_s)
        while True:
            t += rng.expovariate(1.0) * mean
            yield t

    def _lag(self, rng: random.Random) -> float:
        """How far an event's time trails its arrival: jitter, or minutes when late."""
        if self.late_fraction and rng.random() < self.late_fraction:
            return rng.uniform(120.0, 900.0)
        return rng.random() * self.out_of_order_seconds if self.out_of_order_seconds else 0.0


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: events hold no cycles, and with many of them alive
    its full passes would cost more than making them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_kind(kind: str) -> str:
    if kind not in MESSAGES:
        raise UnknownNameError("event kind", kind, MESSAGES)
    return kind


# --- places -----------------------------------------------------------------------------


def location(rng: random.Random) -> tuple[float, float, int]:
    """A point in the metro area: mostly gaussian around a hotspot, sometimes uniform."""
    if rng.random() < UNIFORM_FRACTION:
        lat, long = rng.uniform(METRO[0], METRO[1]), rng.uniform(METRO[2], METRO[3])
        return lat, long, nearest_area(lat, long)
    spot = HOTSPOTS[bisect.bisect(_HOTSPOT_WEIGHTS, rng.random() * _HOTSPOT_WEIGHTS[-1])]
    sigma = spot.sigma_km / KM_PER_DEGREE
    lat, long = _clamp(rng.gauss(spot.lat, sigma), rng.gauss(spot.long, sigma))
    return lat, long, spot.service_area_id


def nearest_area(lat: float, long: float) -> int:
    """The service area of the closest hotspot."""
    best, area = math.inf, 0
    for spot in HOTSPOTS:
        d = (spot.lat - lat) ** 2 + (spot.long - long) ** 2
        if d < best:
            best, area = d, spot.service_area_id
    return area


def _clamp(lat: float, long: float) -> tuple[float, float]:
    return (min(max(lat, METRO[0]), METRO[1]), min(max(long, METRO[2]), METRO[3]))


def _move(rng: random.Random, lat: float, long: float, km: float) -> tuple[float, float]:
    angle = rng.uniform(0.0, 2 * math.pi)
    step = km / KM_PER_DEGREE
    return _clamp(lat + step * math.sin(angle), long + step * math.cos(angle))


# --- bookings and payments --------------------------------------------------------------
# An order's steps: CREATED, then DRIVER_FOUND or CANCELLED_EARLY, then PICKED_UP or
# CANCELLED_LATE, then COMPLETED, then its PAYMENT, each a random gap after the one before.
# Orders in flight when the clock starts are sampled too (the "backlog"), so completions
# and payments flow from the first second instead of after a warm-up.

P_EARLY_CANCEL, P_LATE_CANCEL = 0.08, 0.05
_GAPS = {
    "DRIVER_FOUND": (10.0, 90.0),
    "CANCELLED_EARLY": (30.0, 180.0),
    "PICKED_UP": (120.0, 600.0),
    "CANCELLED_LATE": (30.0, 300.0),
    "PAYMENT": (5.0, 180.0),
}
_THEN = {"PICKED_UP": "COMPLETED", "COMPLETED": "PAYMENT"}
_COMPLETE = (1 - P_EARLY_CANCEL) * (1 - P_LATE_CANCEL)  # share of orders that complete
_REACHED = {
    "DRIVER_FOUND": 1 - P_EARLY_CANCEL,
    "CANCELLED_EARLY": P_EARLY_CANCEL,
    "PICKED_UP": _COMPLETE,
    "CANCELLED_LATE": (1 - P_EARLY_CANCEL) * P_LATE_CANCEL,
    "COMPLETED": _COMPLETE,
    "PAYMENT": _COMPLETE,
}
_BACKLOG_STEPS, _BACKLOG_WEIGHTS = tuple(_REACHED), tuple(itertools.accumulate(_REACHED.values()))
_BOOKINGS_PER_ORDER = 1 + sum(_REACHED.values()) - _COMPLETE
_MAX_FIXED_GAP = max(high for _, high in _GAPS.values())
BACKLOG_HORIZON_S = 4 * 3600.0
Pending = tuple[float, int, str, dict[str, Any], float]  # time, tie-break, step, order, lag


class _Orders:
    """Every step of every order, in arrival order (iterate for ``Pending`` tuples)."""

    def __init__(self, gen: Generator):
        self.gen, self.rng = gen, gen._rng("orders")
        self.rate, self.start = gen.rate_per_s / _BOOKINGS_PER_ORDER, gen.start.timestamp()
        self.pending: list[Pending] = []
        self.seq = itertools.count()

    def __iter__(self) -> Iterator[Pending]:
        new = ((t, "CREATED", _trip_km(self.rng)) for t in self.gen._clock(self.rng, self.rate))
        births = heapq.merge(new, self._backlog(), key=lambda birth: birth[0])
        first = self.rng.randrange(10_000_000, 90_000_000)
        up, down = itertools.count(first), itertools.count(first - 1, -1)
        for t, step, km in births:
            order = _new_order(self.rng, next(up) if step == "CREATED" else next(down), km)
            self._schedule(order, step, t)
            while self.pending and self.pending[0][0] <= t:
                yield heapq.heappop(self.pending)

    def _backlog(self) -> Iterator[tuple[float, str, float]]:
        """(time, step, trip km) of the first step after the start of an order created before.

        A step a gap g after the one before is the first seen at start + x when g > x:
        candidates come at the rate steps happen and survive with that probability.
        """
        rng, total = self.rng, _BACKLOG_WEIGHTS[-1]
        for t in self.gen._clock(rng, self.rate * total):
            if t - self.start > _MAX_FIXED_GAP:
                break
            step = _BACKLOG_STEPS[bisect.bisect(_BACKLOG_WEIGHTS, rng.random() * total)]
            km = _trip_km(rng)
            if _gap(rng, step, km) > t - self.start:
                yield t, step, km
        # after the longest fixed gap, only rides begun before the start are left
        for t in self.gen._clock(rng, self.rate * _COMPLETE, self.start + _MAX_FIXED_GAP):
            if t - self.start > BACKLOG_HORIZON_S:
                return
            km = _trip_km(rng)
            if _gap(rng, "COMPLETED", km) > t - self.start:
                yield t, "COMPLETED", km

    def _schedule(self, order: dict[str, Any], step: str | None, t: float) -> None:
        rng = self.rng
        while step is not None:
            if step == "PAYMENT":
                order["payment"] = _payment_details(rng)
            heapq.heappush(self.pending, (t, next(self.seq), step, order, self.gen._lag(rng)))
            if step == "CREATED":
                step = "CANCELLED_EARLY" if rng.random() < P_EARLY_CANCEL else "DRIVER_FOUND"
            elif step == "DRIVER_FOUND":
                step = "CANCELLED_LATE" if rng.random() < P_LATE_CANCEL else "PICKED_UP"
            else:
                step = _THEN.get(step)
            if step is not None:
                t += _gap(rng, step, order["km"])


def _gap(rng: random.Random, step: str, km: float) -> float:
    if step == "COMPLETED":
        return km / rng.uniform(15.0, 30.0) * 3600.0
    low, high = _GAPS[step]
    return rng.uniform(low, high)


def _trip_km(rng: random.Random) -> float:
    return min(rng.lognormvariate(math.log(6.0), 0.6), 40.0)


def _new_order(rng: random.Random, number: int, km: float) -> dict[str, Any]:
    service, vehicle, prefix = _SERVICES[bisect.bisect(_SERVICE_WEIGHTS, rng.random())]
    lat, long, area = location(rng)
    items, food = _items(rng, service)
    base, per_km = _FARES[service]
    platform, version = _PLATFORMS[int(rng.random() * len(_PLATFORMS))]
    metadata = {"platform": platform, "app_version": version}
    if rng.random() < 0.2:
        metadata["promo_code"] = rng.choice(("HEMAT10", "GAJIAN", "JUMATBERKAH"))
    number_text = f"{prefix}{number}"
    return {
        "order_number": number_text,
        "service_type": service,
        "vehicle_type": vehicle,
        "order_url": f"https://api.example.com/v1/bookings/{number_text}",
        "customer_id": f"cust-{int(rng.random() * 250_000):06d}",
        "driver_id": f"drv-{int(rng.random() * DRIVERS):05d}",
        "area": area,
        "km": km,
        "pickup": (lat, long),
        "dropoff": _move(rng, lat, long, max(km - 0.5, 0.1) / 1.3),
        "amount": float(round((base + per_km * km + food) / 500) * 500),
        "items": items,
        "metadata": metadata,
    }


def _items(rng: random.Random, service: str) -> tuple[list[dict[str, Any]], int]:
    """The order's items and what they cost."""
    if service == "GO_SEND":
        return [{"id": "parcel", "quantity": 1, "name": "Parcel"}], 0
    if service != "GO_FOOD":
        return [], 0
    items, total = [], 0
    for dish, name, price in rng.sample(_MENU, 1 + int(rng.random() * 4)):
        quantity = 1 + int(rng.random() * 3)
        items.append({"id": dish, "quantity": quantity, "name": name})
        total += price * quantity
    return items, total


def _payment_details(rng: random.Random) -> tuple[str, str, str]:
    method = _METHODS[bisect.bisect(_METHOD_WEIGHTS, rng.random())]
    r = rng.random()
    status = "SUCCESS" if method == "CASH" or r < 0.92 else "FAILED" if r < 0.97 else "PENDING"
    return f"pay-{rng.getrandbits(48):012x}", method, status


def _booking(order: dict[str, Any], step: str, event_time: float) -> dict[str, Any]:
    """A BookingLogMessage (fields in .proto order) for ``order`` at ``step``."""
    (lat, long), (end_lat, end_long) = order["pickup"], order["dropoff"]
    return {
        "order_number": order["order_number"],
        "order_url": order["order_url"],
        "service_type": order["service_type"],
        "status": _STATUS.get(step, step),
        "customer_id": order["customer_id"],
        "driver_id": "" if step in _NO_DRIVER else order["driver_id"],
        "pickup_lat": lat,
        "pickup_long": long,
        "dropoff_lat": end_lat,
        "dropoff_long": end_long,
        "service_area_id": order["area"],
        "vehicle_type": order["vehicle_type"],
        "amount": order["amount"],
        "currency": "IDR",
        "items": [dict(item) for item in order["items"]],
        "event_timestamp": iso(event_time),
        "metadata": dict(order["metadata"]),
    }


def _payment(order: dict[str, Any], event_time: float) -> dict[str, Any]:
    payment_id, method, status = order["payment"]
    return {
        "payment_id": payment_id,
        "order_number": order["order_number"],
        "customer_id": order["customer_id"],
        "amount": order["amount"],
        "currency": "IDR",
        "method": method,
        "status": status,
        "event_timestamp": iso(event_time),
    }


def _order_stream(kind: str):
    def stream(gen: Generator) -> Iterator[tuple[float, dict[str, Any]]]:
        for t, _, step, order, lag in _Orders(gen):
            if kind == "payments" and step == "PAYMENT":
                yield t, _payment(order, t - lag)
            elif kind == "bookings" and step != "PAYMENT":
                yield t, _booking(order, step, t - lag)

    return stream


# --- drivers and api logs ---------------------------------------------------------------


def _driver_pings(gen: Generator) -> Iterator[tuple[float, dict[str, Any]]]:
    rng = gen._rng("driver_pings")
    spots = [location(rng) for _ in range(DRIVERS)]
    lats, longs = [lat for lat, _, _ in spots], [long for _, long, _ in spots]
    states = [rng.choice(_DRIVER_STATES) for _ in range(DRIVERS)]
    for t in gen._clock(rng):
        index = rng.randrange(DRIVERS)
        if rng.random() < 0.02:
            states[index] = rng.choices(_DRIVER_STATES, weights=(5, 4, 1))[0]
        speed = 0.0 if states[index] == "OFFLINE" else max(0.0, rng.gauss(22.0, 9.0))
        km = speed * rng.uniform(5, 30) / 3600
        lat, long = _move(rng, lats[index], longs[index], km)
        lats[index], longs[index] = lat, long
        accuracy = round(rng.lognormvariate(math.log(8.0), 0.5), 1)
        yield (
            t,
            {
                "driver_id": f"drv-{index:05d}",
                "lat": lat,
                "long": long,
                "accuracy": accuracy,
                "speed_kmh": round(speed, 1),
                "status": states[index],
                "service_area_id": nearest_area(lat, long),
                "vehicle_type": "CAR" if index % 4 == 0 else "BIKE",
                "event_timestamp": iso(t - gen._lag(rng)),
            },
        )


def _api_logs(gen: Generator) -> Iterator[tuple[float, dict[str, Any]]]:
    rng = gen._rng("api_logs")
    weights = [1.0 / median for _, median, _, _ in _APIS]
    for t in gen._clock(rng):
        service, median, errors, routes = rng.choices(_APIS, weights=weights)[0]
        method, path = rng.choice(routes)
        status, latency = _response(rng, method, median, errors)
        path = path.replace("{id}", str(rng.randrange(1_000_000)))
        yield (
            t,
            {
                "request_id": f"{rng.getrandbits(64):016x}",
                "service": service,
                "path": path,
                "method": method,
                "status_code": status,
                "latency_ms": latency,
                "client_id": rng.choice(_CLIENTS),
                "event_timestamp": iso(t - gen._lag(rng)),
            },
        )


def _response(rng: random.Random, method: str, median: float, errors: float) -> tuple[int, int]:
    r = rng.random()
    if r < errors:
        status = rng.choices((500, 502, 503, 504), weights=(4, 2, 2, 2))[0]
        if status == 504:
            return status, int(rng.uniform(5000, 10000))
        return status, int(rng.lognormvariate(math.log(median * 2), 0.8)) + 1
    if r < errors + 0.04:
        return rng.choice((400, 401, 404, 409, 429)), int(rng.lognormvariate(math.log(8), 0.5)) + 1
    return (201 if method == "POST" else 200), int(rng.lognormvariate(math.log(median), 0.6)) + 1


_FACTORIES = {
    "bookings": _order_stream("bookings"),
    "payments": _order_stream("payments"),
    "driver_pings": _driver_pings,
    "api_logs": _api_logs,
}


# --- encoding and files -----------------------------------------------------------------


def iso(t: float) -> str:
    """Epoch seconds as ISO-8601 UTC with milliseconds and ``Z`` (protobuf's JSON form)."""
    second = math.floor(t)
    return f"{_second(second)}.{min(int((t - second) * 1000), 999):03d}Z"


@functools.lru_cache(maxsize=4096)
def _second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def encode(event: dict[str, Any], message: str, registry: Any = None) -> bytes:
    """``event`` (JSON form) as the serialized protobuf ``message`` of ``registry``."""
    if registry is None:
        from workbench.schemas.registry import default_registry

        registry = default_registry()
    instance = registry.message_class(message)()
    json_format.ParseDict(event, instance)
    return instance.SerializeToString()


def malformed_bytes(rng: random.Random) -> bytes:
    """Bytes no message parses: a truncated length, an invalid wire type or an unfinished
    varint, after an innocent-looking prefix."""
    prefix = b"\x0a\x05RB-42" if rng.random() < 0.5 else b""
    noise = rng.randbytes(rng.randint(0, 12))
    return rng.choice(
        (
            prefix + b"\x0a" + bytes([rng.randint(40, 120)]) + noise[:10],  # length past the end
            prefix + bytes([(rng.randint(1, 15) << 3) | rng.choice((6, 7))]) + noise,  # wire type
            prefix + b"\x08" + b"\xff" * rng.randint(1, 9),  # varint never ends
        )
    )


def write_jsonl(path: str | Path, events: Iterable[dict[str, Any]]) -> int:
    """Write ``events`` one JSON object per line; returns how many were written."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
            count += 1
    return count
