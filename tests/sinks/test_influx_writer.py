"""Rows to points (Dagger's convention), then real writes into InfluxDB 1.x and VictoriaMetrics.

Read-backs go through each server's own query API (InfluxQL ``/query``, VictoriaMetrics
``/api/v1/export``) and are compared exactly.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from readback import influxql, vm_export

from workbench.dev.ports import free_port
from workbench.exceptions import SinkError
from workbench.moments import epoch_ms
from workbench.sinks.influx import InfluxConfig
from workbench.sinks.influx_writer import InfluxWriter, to_points

pytestmark = pytest.mark.unit

T0 = datetime(2024, 1, 2, 3, 4, 5, 678000)  # naive: UTC
T0_MS = 1704164645678
MINUTE_MS = 60_000

# (title, row, line protocol of its point, or None when the row makes no point)
CASES = [
    (
        "tag_ keeps its prefix, label_ loses it",
        {"window_timestamp": T0, "tag_city": "jkt", "label_service": "ride", "n": 1},
        f"m,service=ride,tag_city=jkt n=1i {T0_MS}",
    ),
    (
        "field types: int stays int, bool, str, float, Decimal as float",
        {"window_timestamp": T0, "n": 3, "ok": True, "s": 'a "b"', "x": 1.5, "d": Decimal("2.25")},
        f'm d=2.25,n=3i,ok=true,s="a \\"b\\"",x=1.5 {T0_MS}',
    ),
    (
        "a datetime field is epoch milliseconds",
        {"window_timestamp": T0, "first_seen": datetime(1970, 1, 1, 0, 0, 1)},
        f"m first_seen=1000i {T0_MS}",
    ),
    (
        "nulls and non-finite floats are skipped",
        {
            "window_timestamp": T0,
            "tag_a": None,
            "label_b": None,
            "n": None,
            "x": float("nan"),
            "y": 2,
        },
        f"m y=2i {T0_MS}",
    ),
    (
        "a row with no fields makes no point",
        {"window_timestamp": T0, "tag_city": "jkt", "label_b": "x", "n": None},
        None,
    ),
    ("time from epoch millis", {"window_timestamp": T0_MS, "n": 1}, f"m n=1i {T0_MS}"),
    (
        "time from an aware datetime",
        {"window_timestamp": T0.replace(tzinfo=timezone(timedelta(hours=7))), "n": 1},
        f"m n=1i {T0_MS - 7 * 3600_000}",
    ),
    (
        "escaping in tags",
        {"window_timestamp": T0, "label_area name": "a,b=c", "n": 1},
        f"m,area\\ name=a\\,b\\=c n=1i {T0_MS}",
    ),
]


@pytest.mark.parametrize(("row", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_to_points(row, expected):
    lines = [point.to_line_protocol() for point in to_points([row], "m")]
    assert lines == ([expected] if expected else [])


def test_other_time_column():
    row = {"event_time": T0, "window_timestamp": "not used as time", "n": 1}
    [point] = to_points([row], "m", time_column="event_time")
    assert point.to_line_protocol() == f'm n=1i,window_timestamp="not used as time" {T0_MS}'


def test_missing_time_column_names_it_and_the_columns():
    with pytest.raises(SinkError) as err:
        to_points([{"tag_city": "jkt", "n": 1}], "rides")
    assert "'rides'" in str(err.value)
    assert "no time column 'window_timestamp'; its columns: tag_city, n." in str(err.value)


@pytest.mark.parametrize("value", [None, "2024-01-02", 1.5, True])
def test_bad_time_value(value):
    with pytest.raises(SinkError, match="time column 'window_timestamp' .* epoch millis"):
        to_points([{"window_timestamp": value, "n": 1}], "m")


def test_unsupported_field_type():
    with pytest.raises(SinkError, match="column 'areas' holds list"):
        to_points([{"window_timestamp": T0, "areas": [1, 2]}], "m")


# --- InfluxDB 1.x (v1 API) --------------------------------------------------------------


def rides(count=3, scale=1):
    """Rows as a windowed aggregation emits them: one per minute and city."""
    return [
        {
            "window_timestamp": T0 + timedelta(minutes=i),
            "tag_city": city,
            "label_service": "ride",
            "orders": (10 + i) * scale,
            "fare": 1.5 * (i + 1) * scale,
            "surge": i % 2 == 0,
        }
        for i in range(count)
        for city in ("jkt", "bdg")
    ]


def select_all(server, db, measurement):
    """Every point of ``measurement`` as a dict, ordered by time, then city."""
    result = influxql(server, f'SELECT * FROM "{measurement}"', db)
    rows = [
        dict(zip(s["columns"], v, strict=True))
        for s in result.get("series", [])
        for v in s["values"]
    ]
    return sorted(rows, key=lambda r: (r["time"], r["tag_city"]))


def expected_v1(rows):
    return sorted(
        (
            {
                "time": epoch_ms(r["window_timestamp"]),
                "tag_city": r["tag_city"],
                "service": r["label_service"],
                "orders": r["orders"],
                "fare": r["fare"],
                "surge": r["surge"],
            }
            for r in rows
        ),
        key=lambda r: (r["time"], r["tag_city"]),
    )


@pytest.fixture
def v1_config(influxdb_v1):
    database = f"wb_{uuid.uuid4().hex[:12]}"
    influxql(influxdb_v1, f'CREATE DATABASE "{database}"')
    return InfluxConfig(api=1, url=influxdb_v1.url, database=database, measurement="rides")


def test_v1_write_reads_back_exactly(influxdb_v1, v1_config):
    rows = rides(count=5)
    with InfluxWriter(v1_config.model_copy(update={"batch_size": 3})) as writer:
        assert writer.write(rows) == 10
    assert select_all(influxdb_v1, v1_config.database, "rides") == expected_v1(rows)


def test_v1_rewrite_is_idempotent_and_overwrites(influxdb_v1, v1_config):
    with InfluxWriter(v1_config) as writer:
        writer.write(rides())
        writer.write(rides())
        assert select_all(influxdb_v1, v1_config.database, "rides") == expected_v1(rides())
        writer.write(rides(scale=2))  # a window's later update: same tags and time
    assert select_all(influxdb_v1, v1_config.database, "rides") == expected_v1(rides(scale=2))


def test_v1_field_type_conflict_is_a_sink_error(v1_config):
    with InfluxWriter(v1_config) as writer:
        writer.write([{"window_timestamp": T0, "orders": 1}])
        with pytest.raises(SinkError) as err:
            writer.write([{"window_timestamp": T0, "orders": 1.5}])
    assert err.value.status == 400
    assert "field type conflict" in err.value.detail
    message = str(err.value)
    assert message.startswith(f"influx sink (measurement 'rides', database '{v1_config.database}'")
    assert 'input field \\"orders\\"' not in message  # the server's text, decoded from JSON
    assert 'input field "orders" on measurement "rides" is type float' in message
    assert "cast it in the SQL" in message


def test_v1_unknown_database_is_a_sink_error(influxdb_v1):
    config = InfluxConfig(api=1, url=influxdb_v1.url, database="no_such_db", measurement="m")
    with InfluxWriter(config) as writer, pytest.raises(SinkError) as err:
        writer.write(rides())
    assert err.value.status == 404
    assert 'database not found: "no_such_db"' in str(err.value)
    assert "CREATE DATABASE" in str(err.value)


def test_v2_api_against_influxdb_1_is_a_sink_error(influxdb_v1):
    config = InfluxConfig(api=2, url=influxdb_v1.url, bucket="b", measurement="m")
    with InfluxWriter(config) as writer, pytest.raises(SinkError) as err:
        writer.write(rides())
    assert err.value.status == 404
    assert "InfluxDB 1.x needs 'api: 1'" in str(err.value)


@pytest.mark.parametrize("api", [1, 2])
def test_unreachable_server_is_a_sink_error(api):
    url = f"http://127.0.0.1:{free_port()}"
    config = InfluxConfig(api=api, url=url, database="d", bucket="b", measurement="m", retries=1)
    with InfluxWriter(config) as writer, pytest.raises(SinkError, match=f"no answer from {url}"):
        writer.write(rides())


class Flaky(BaseHTTPRequestHandler):
    """Answers 503 to the first ``failures`` writes, then 204; records every request path."""

    failures = 0
    seen: list[str] = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(self.path.partition("?")[0])
        status = 503 if len(self.seen) <= self.failures else 204
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky():
    def serve(failures):
        handler = type("Handler", (Flaky,), {"failures": failures, "seen": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}", handler.seen

    servers = []
    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("api", "path"), [(1, "/write"), (2, "/api/v2/write")])
def test_5xx_is_retried(flaky, api, path):
    url, seen = flaky(failures=2)
    config = InfluxConfig(api=api, url=url, database="d", bucket="b", measurement="m", retries=3)
    with InfluxWriter(config) as writer:
        assert writer.write(rides()) == 6
    assert seen == [path] * 3


@pytest.mark.parametrize("api", [1, 2])
def test_5xx_after_the_last_retry_is_a_sink_error(flaky, api):
    url, seen = flaky(failures=100)
    config = InfluxConfig(api=api, url=url, database="d", bucket="b", measurement="m", retries=2)
    with InfluxWriter(config) as writer, pytest.raises(SinkError) as err:
        writer.write(rides())
    assert err.value.status == 503
    assert len(seen) == 3


# --- VictoriaMetrics (v2 API) -----------------------------------------------------------


def expected_vm(rows, measurement):
    series = {}
    for r in rows:
        labels = (("service", r["label_service"]), ("tag_city", r["tag_city"]))
        time = epoch_ms(r["window_timestamp"])
        for field in ("orders", "fare", "surge"):
            value = int(r[field]) if field == "surge" else r[field]
            series.setdefault((f"{measurement}_{field}", labels), []).append((time, value))
    return series


@pytest.fixture
def vm_config(victoria_metrics):
    measurement = f"rides_{uuid.uuid4().hex[:8]}"
    return InfluxConfig(api=2, url=victoria_metrics.url, bucket="wb", measurement=measurement)


def test_vm_write_reads_back_exactly(victoria_metrics, vm_config):
    rows = rides(count=4)
    with InfluxWriter(vm_config.model_copy(update={"batch_size": 5})) as writer:
        assert writer.write(rows) == 8
    measurement = vm_config.measurement
    assert vm_export(victoria_metrics, measurement) == expected_vm(rows, measurement)


def test_vm_rewrite_of_the_same_rows_is_idempotent(victoria_metrics, vm_config):
    with InfluxWriter(vm_config) as writer:
        writer.write(rides())
        writer.write(rides())
    measurement = vm_config.measurement
    assert vm_export(victoria_metrics, measurement) == expected_vm(rides(), measurement)


def test_vm_keeps_one_sample_per_timestamp_not_necessarily_the_last(victoria_metrics, vm_config):
    """VictoriaMetrics 1.79 deduplicates to one of the values written; which is undefined."""
    with InfluxWriter(vm_config) as writer:
        writer.write(rides())
        writer.write(rides(scale=2))
    measurement = vm_config.measurement
    got = vm_export(victoria_metrics, measurement)
    first, second = expected_vm(rides(), measurement), expected_vm(rides(scale=2), measurement)
    assert got.keys() == first.keys()
    for key, samples in got.items():
        assert [t for t, _ in samples] == [t for t, _ in first[key]]
        for sample, old, new in zip(samples, first[key], second[key], strict=True):
            assert sample in (old, new)
