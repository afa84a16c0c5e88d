"""Replay over recorded generator events, checked against plain-Python computations.

Expected rows never come from the product: windows are integer-millisecond arithmetic,
S2 cells come from s2sphere, geohash and haversine are written here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import s2sphere
import yaml
from geo_reference import haversine_km

import workbench
from workbench.dev.generator import Generator, write_jsonl
from workbench.lab.replay import replay

pytestmark = pytest.mark.unit

SPEC = Path(workbench.__file__).parent / "data" / "daggers" / "surge-pricing.yaml"
START = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MINUTE = 60_000
BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


# --- independent helpers ------------------------------------------------------------------


def ms(text: str) -> int:
    """ISO-8601 (with 'Z') to epoch milliseconds, exactly."""
    return (datetime.fromisoformat(text) - EPOCH) // timedelta(milliseconds=1)


def iso(millis: int) -> str:
    stamp = EPOCH + timedelta(milliseconds=millis)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def s2_cell(lat: float, lng: float, level: int) -> s2sphere.CellId:
    return s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(level)


def s2_signed_id(lat: float, lng: float, level: int) -> str:
    cell_id = s2_cell(lat, lng, level).id()
    return str(cell_id - 2**64 if cell_id >= 2**63 else cell_id)


def geohash(lat: float, lng: float, length: int) -> str:
    box = {"lng": [-180.0, 180.0], "lat": [-90.0, 90.0]}
    point, code, bits = {"lng": lng, "lat": lat}, "", 0
    for i in range(length * 5):
        axis = "lng" if i % 2 == 0 else "lat"
        mid = sum(box[axis]) / 2
        bit = point[axis] >= mid
        box[axis][0 if bit else 1] = mid
        bits = bits * 2 + bit
        if i % 5 == 4:
            code, bits = code + BASE32[bits], 0
    return code


def surge_expected(bookings: list[dict]) -> Counter:
    counts: Counter = Counter()
    customers: defaultdict = defaultdict(set)
    for b in bookings:
        if b["status"] != "CREATED":
            continue
        t = ms(b["event_timestamp"])
        key = (s2_signed_id(b["pickup_lat"], b["pickup_long"], 13), b["vehicle_type"])
        key += (iso(t - t % MINUTE + MINUTE),)
        counts[key] += 1
        customers[key].add(b["customer_id"])
    return Counter({(*k, n, len(customers[k])): 1 for k, n in counts.items()})


def rows(path: Path, *columns: str) -> Counter:
    lines = path.read_text(encoding="utf-8").splitlines()
    return Counter(tuple(json.loads(line)[c] for c in columns) for line in lines)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "workbench.cli.main", "replay", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


SURGE_COLUMNS = ("tag_s2id", "tag_vehicle_type", "window_timestamp", "bookings", "unique_customers")


# --- recordings ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    """3000 bookings (~10 minutes, a few seconds out of order) and their payments."""
    gen = Generator(seed=11, start=START, rate_per_s=5, out_of_order_seconds=4)
    bookings, payments = gen.take("bookings", 3000), gen.take("payments", 700)
    for b in bookings:  # a small pool of customers, so that some come back within a minute
        b["customer_id"] = f"cust-{int(b['customer_id'][5:]) % 5}"
    folder = tmp_path_factory.mktemp("recorded")
    write_jsonl(folder / "booking.jsonl", bookings)
    write_jsonl(folder / "payment.jsonl", payments)
    return {"dir": folder, "bookings": bookings, "payments": payments}


def test_helpers_match_dagger_vectors():
    # the vectors Dagger's own UDF tests use; pins the helpers, not the product
    assert s2_signed_id(-6.170024, 106.8243203, 13) == "3344474489181175808"
    assert s2_cell(-6.170024, 106.8243203, 13).to_token() == "2e69f5d4"
    assert geohash(-6.170024, 106.8243203, 6) == "qqguyu"
    assert haversine_km(48.8566, 2.3522, 51.5074, 0.1278) == pytest.approx(334.5761379805)
    assert iso(ms("2026-11-21T07:59:59.027Z") + 973) == "2026-11-21T08:00:00.000Z"


@pytest.mark.integration
def test_surge_spec_through_cli(recorded, tmp_path):
    out = tmp_path / "surge.jsonl"
    booking = recorded["dir"] / "booking.jsonl"
    done = run_cli(str(SPEC), "--table", f"booking={booking}", "--out", str(out))
    assert done.returncode == 0, done.stderr
    expected = surge_expected(recorded["bookings"])
    assert len(expected) > 100 and any(row[3] > row[4] > 1 for row in expected)
    assert re.search(rf"\bwrote {len(expected)} rows to ", done.stdout), done.stdout
    assert rows(out, *SURGE_COLUMNS) == expected


@pytest.mark.integration
def test_a_query_that_fails_as_it_runs_points_at_the_users_sql(recorded, tmp_path):
    """Text that does not cast to a number fails only as Spark runs the query: one error
    at the user's line and column, no Java stack (issue 36)."""
    query = tmp_path / "bad.sql"
    query.write_text("SELECT service_area_id,\n  sum(order_number) AS s\nFROM booking GROUP BY 1\n")
    booking = recorded["dir"] / "booking.jsonl"
    out = tmp_path / "out.jsonl"
    done = run_cli("--sql", str(query), "--table", f"booking={booking}", "--out", str(out))
    assert done.returncode == 1
    error = done.stderr[done.stderr.index("error: ") :]
    assert error.startswith("error: Spark cannot run the query: [CAST_INVALID_INPUT] The value ")
    assert error.splitlines()[1:] == ["    sum(order_number) AS s", "    ^^^^^^^^^^^^^^^^^"]
    assert "Line 2, Col: 3." in error and "at org.apache" not in done.stderr


@pytest.mark.integration
def test_rowtime_field_epoch_millis_through_cli(recorded, tmp_path):
    events = []
    for b in recorded["bookings"]:
        event = dict(b)
        event["ts_ms"] = ms(event.pop("event_timestamp"))
        events.append(event)
    write_jsonl(tmp_path / "booking.jsonl", events)
    query = tmp_path / "surge.sql"
    query.write_text(yaml.safe_load(SPEC.read_text(encoding="utf-8"))["sql"], encoding="utf-8")
    out = tmp_path / "surge.jsonl"
    done = run_cli(
        "--sql",
        str(query),
        "--table",
        f"booking={tmp_path / 'booking.jsonl'}",
        "--rowtime-field",
        "ts_ms",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    expected = surge_expected(recorded["bookings"])
    assert re.search(rf"\bwrote {len(expected)} rows to ", done.stdout), done.stdout
    assert rows(out, *SURGE_COLUMNS) == expected


def test_hopping_windows_per_service_type(spark, recorded, tmp_path):
    sql = """
        SELECT service_type, count(*) AS n,
               HOP_START(rowtime, INTERVAL '30' SECOND, INTERVAL '2' MINUTE) AS ws,
               HOP_END(rowtime, INTERVAL '30' SECOND, INTERVAL '2' MINUTE) AS we
        FROM booking
        GROUP BY service_type, HOP(rowtime, INTERVAL '30' SECOND, INTERVAL '2' MINUTE)"""
    result = replay(
        spark, {"booking": str(recorded["dir"] / "booking.jsonl")}, tmp_path / "hop.jsonl", sql=sql
    )
    slide, size = 30_000, 2 * MINUTE
    counts: Counter = Counter()
    for b in recorded["bookings"]:
        t = ms(b["event_timestamp"])
        last = t - t % slide
        for start in range(last - size + slide, last + 1, slide):
            counts[(b["service_type"], iso(start), iso(start + size))] += 1
    expected = Counter({(*k, n): 1 for k, n in counts.items()})
    assert result.rows == len(expected) > 40
    assert rows(result.out, "service_type", "ws", "we", "n") == expected


def test_session_windows_of_driver_pings(spark, tmp_path):
    gen = Generator(seed=5, start=START, rate_per_s=20, out_of_order_seconds=3)
    pings = gen.take("driver_pings", 4000)
    # Flink merges sessions that touch: pings exactly one gap apart share a session
    t0 = ms("2026-11-21T08:00:00.500Z")
    for offset in (0, 2 * MINUTE, 4 * MINUTE + 1):
        pings.append({"driver_id": "edge", "event_timestamp": iso(t0 + offset)})
    write_jsonl(tmp_path / "ping.jsonl", pings)
    sql = """
        SELECT driver_id, count(*) AS n, SESSION_START(rowtime, INTERVAL '2' MINUTE) AS s,
               SESSION_END(rowtime, INTERVAL '2' MINUTE) AS e
        FROM ping GROUP BY driver_id, SESSION(rowtime, INTERVAL '2' MINUTE)"""
    result = replay(spark, {"ping": str(tmp_path / "ping.jsonl")}, tmp_path / "s.jsonl", sql=sql)
    gap, times = 2 * MINUTE, defaultdict(list)
    for p in pings:
        times[p["driver_id"]].append(ms(p["event_timestamp"]))
    expected: Counter = Counter()
    for driver, ts in times.items():
        ts.sort()
        sessions = [[ts[0]]]
        for t in ts[1:]:
            if t - sessions[-1][-1] <= gap:
                sessions[-1].append(t)
            else:
                sessions.append([t])
        for s in sessions:
            expected[(driver, len(s), iso(s[0]), iso(s[-1] + gap))] += 1
    assert {k for k in expected if k[0] == "edge"} == {
        ("edge", 2, "2026-11-21T08:00:00.500Z", "2026-11-21T08:04:00.500Z"),
        ("edge", 1, "2026-11-21T08:04:00.501Z", "2026-11-21T08:06:00.501Z"),
    }
    assert any(k[1] >= 3 for k in expected)
    assert len(expected) > len(times)  # some drivers have more than one session
    assert rows(result.out, "driver_id", "n", "s", "e") == expected


def test_interval_join_bookings_with_payments(spark, recorded, tmp_path):
    completed = [b for b in recorded["bookings"] if b["status"] == "COMPLETED"]
    extra = []  # payments just outside and exactly on the bounds of the interval
    for i, b in enumerate(completed[:20]):
        offset = (-1, 10 * MINUTE + 1, 10 * MINUTE, 0)[i % 4]
        extra.append(
            {
                "payment_id": f"edge-{i}",
                "order_number": b["order_number"],
                "amount": 1.0,
                "event_timestamp": iso(ms(b["event_timestamp"]) + offset),
            }
        )
    payments = recorded["payments"] + extra
    write_jsonl(tmp_path / "payment.jsonl", payments)
    sql = """
        SELECT b.order_number, p.payment_id, p.amount,
               b.event_timestamp AS booked, p.event_timestamp AS paid
        FROM booking AS b JOIN payment AS p
          ON b.order_number = p.order_number
         AND p.rowtime BETWEEN b.rowtime AND b.rowtime + INTERVAL '10' MINUTE
        WHERE b.status = 'COMPLETED'"""
    tables = {
        "booking": str(recorded["dir"] / "booking.jsonl"),
        "payment": str(tmp_path / "payment.jsonl"),
    }
    result = replay(spark, tables, tmp_path / "join.jsonl", sql=sql)
    expected: Counter = Counter()
    for b in completed:
        for p in payments:
            bt, pt = ms(b["event_timestamp"]), ms(p["event_timestamp"])
            if p["order_number"] == b["order_number"] and bt <= pt <= bt + 10 * MINUTE:
                expected[(b["order_number"], p["payment_id"], p["amount"], iso(bt), iso(pt))] += 1
    edges = {k[1] for k in expected if k[1].startswith("edge-")}
    assert len(expected) > 300 and edges == {f"edge-{i}" for i in range(20) if i % 4 > 1}
    assert rows(result.out, "order_number", "payment_id", "amount", "booked", "paid") == expected


def test_unnest_item_quantities_per_minute(spark, recorded, tmp_path):
    sql = """
        SELECT items.id AS item_id, sum(items.quantity) AS qty,
               TUMBLE_END(b.rowtime, INTERVAL '1' MINUTE) AS we
        FROM booking AS b, UNNEST(b.items) AS items (id, quantity, name)
        GROUP BY items.id, TUMBLE(b.rowtime, INTERVAL '1' MINUTE)"""
    result = replay(
        spark,
        {"booking": str(recorded["dir"] / "booking.jsonl")},
        tmp_path / "items.jsonl",
        sql=sql,
    )
    totals: Counter = Counter()
    for b in recorded["bookings"]:
        t = ms(b["event_timestamp"])
        for item in b["items"]:
            totals[(item["id"], iso(t - t % MINUTE + MINUTE))] += item["quantity"]
    expected = Counter({(*k, q): 1 for k, q in totals.items()})
    assert len({k[0] for k in totals}) > 5 and any(q > 20 for q in totals.values())
    assert rows(result.out, "item_id", "we", "qty") == expected


def test_geo_udfs_per_order(spark, tmp_path):
    gen = Generator(seed=3, start=START, rate_per_s=50)
    created = [b for b in gen.take("bookings", 1200) if b["status"] == "CREATED"]
    write_jsonl(tmp_path / "booking.jsonl", created)
    sql = """
        SELECT order_number, S2Token(pickup_lat, pickup_long, 13) AS tok,
               GeoHash(pickup_lat, pickup_long, 7) AS gh,
               Distance(pickup_lat, pickup_long, dropoff_lat, dropoff_long) AS km
        FROM booking"""
    result = replay(
        spark, {"booking": str(tmp_path / "booking.jsonl")}, tmp_path / "geo.jsonl", sql=sql
    )
    got = {r["order_number"]: r for r in map(json.loads, result.out.read_text().splitlines())}
    assert result.rows == len(created) > 200 and set(got) == {b["order_number"] for b in created}
    for b in created:
        row, lat, lng = got[b["order_number"]], b["pickup_lat"], b["pickup_long"]
        assert row["tok"] == s2_cell(lat, lng, 13).to_token()
        assert row["gh"] == geohash(lat, lng, 7)
        km = haversine_km(lat, lng, b["dropoff_lat"], b["dropoff_long"])
        assert row["km"] == pytest.approx(km, rel=1e-9, abs=0)


@pytest.mark.integration
def test_rows_that_do_not_fit_the_message_are_set_aside_with_file_and_line(recorded, tmp_path):
    """Wrong nested types and array lines are rejects with file:line, never silently
    dropped or split; the good rows give the same windows as a clean recording."""
    bookings = recorded["bookings"][:600]
    bad = [
        {**bookings[0], "items": {"id": "x", "quantity": 1}},  # repeated field as an object
        {**bookings[1], "items": [{"id": "x", "quantity": "many", "name": "n"}]},
        [bookings[2], bookings[3]],  # one line holding an array of two rows
        {k: v for k, v in bookings[4].items() if k != "event_timestamp"},
    ]
    path = tmp_path / "booking.jsonl"
    lines = [json.dumps(b) for b in bookings] + [json.dumps(b) for b in bad]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    out = tmp_path / "surge.jsonl"
    done = run_cli(
        str(SPEC), "--table", f"booking={path}", "--out", str(out), "--rejects", str(rejects)
    )
    assert done.returncode == 0, done.stderr
    assert "4 rejected rows in" in done.stdout
    found = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(r["file"], r["line"]) for r in found] == [(str(path), 600 + i) for i in (1, 2, 3, 4)]
    assert "'items' must be an array" in found[0]["error"]
    assert "'items[0].quantity' must be a whole number" in found[1]["error"]
    assert "a JSON array" in found[2]["error"]
    assert "no readable event time" in found[3]["error"]
    assert rows(out, *SURGE_COLUMNS) == surge_expected(bookings)
