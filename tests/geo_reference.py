"""Independent reference computations the geo and replay tests compare against."""

from __future__ import annotations

import math


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in km (R = 6371), written from the formula, not from the product."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return 2 * 6371 * math.asin(math.sqrt(a))


def s2_id(lat: float, lng: float, level: int) -> str:
    """Dagger's ``S2Id``: the signed 64-bit cell id as a decimal string (s2sphere's cell)."""
    import s2sphere

    cell = s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(level)
    value = cell.id()
    return str(value - (1 << 64) if value >= 1 << 63 else value)


def surge_windows(events, window_s: int = 60, level: int = 13) -> dict:
    """The surge-pricing dagger by hand: {(s2 cell, vehicle, window end ms): (bookings,
    unique customers)} over CREATED bookings in tumbling ``window_s`` windows, cells of S2
    ``level``."""
    from datetime import datetime

    groups: dict = {}
    for e in events:
        if e["status"] != "CREATED":
            continue
        ms = int(
            datetime.fromisoformat(e["event_timestamp"].replace("Z", "+00:00")).timestamp() * 1000
        )
        end = (ms // (window_s * 1000) + 1) * window_s * 1000
        key = (s2_id(e["pickup_lat"], e["pickup_long"], level), e["vehicle_type"], end)
        groups.setdefault(key, []).append(e["customer_id"])
    return {k: (len(v), len(set(v))) for k, v in groups.items()}
