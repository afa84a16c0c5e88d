"""Reading a dagger's output back from its InfluxDB sink: the queries as the seed system
wrote them, Flux's CSV answer, and failures that name no secret. (The v1 read of a real
InfluxDB is in test_health_page.py.)"""

from __future__ import annotations

import pytest

from workbench.server.sink_series import flux, flux_csv, influxql, outputs, read
from workbench.sinks.influx import InfluxConfig

pytestmark = pytest.mark.unit

SECRET = "pa55-w0rd-not-to-show"


def test_the_queries():
    assert influxql("surge") == (
        'SELECT sum(*) FROM "surge" WHERE time > now() - 900s GROUP BY time(30s)'
    )
    assert flux('b"k', "m${x}") == (
        'from(bucket: "b\\"k") |> range(start: -900s) '
        '|> filter(fn: (r) => r._measurement == "m\\${x}") '
        '|> group(columns: ["_field"]) '
        "|> aggregateWindow(every: 30s, fn: sum, createEmpty: false)"
    )


def test_flux_csv_answer():
    answer = (
        ",result,table,_start,_stop,_time,_value,_field,_measurement\r\n"
        ",_result,0,x,y,2026-11-24T10:00:30Z,12,bookings,surge\r\n"
        ",_result,0,x,y,2026-11-24T10:00:00Z,7.5,bookings,surge\r\n"
        "\r\n"
        ",result,table,_start,_stop,_time,_value,_field,_measurement\r\n"
        ",_result,1,x,y,2026-11-24T10:00:00Z,,drivers,surge\r\n"
    )
    assert flux_csv(answer) == {
        "bookings": [(1795514400.0, 7.5), (1795514430.0, 12.0)],
        "drivers": [(1795514400.0, None)],
    }


def test_an_unreachable_sink_is_a_problem_without_its_secrets(monkeypatch):
    monkeypatch.setenv("WB_TEST_INFLUX_PASSWORD", SECRET)
    sink = InfluxConfig(
        url="http://127.0.0.1:9",
        api=1,
        database="dagger",
        measurement="surge",
        username="wb",
        password="${env:WB_TEST_INFLUX_PASSWORD}",
    )
    out = read(sink)
    assert out.fields == {} and "cannot connect" in out.problem
    assert SECRET not in repr(out) and "${env:WB_TEST_INFLUX_PASSWORD}" in sink.password


def test_a_missing_secret_says_which():
    sink = InfluxConfig(
        url="http://127.0.0.1:9", bucket="b", measurement="m", token="${env:WB_TEST_NO_SUCH}"
    )
    assert "WB_TEST_NO_SUCH" in read(sink).problem


def test_only_influx_sinks_are_read():
    spec = (
        "name: s\nstreams: [{table: t, message: esb.booking.BookingLogMessage, "
        "bootstrap_servers: '127.0.0.1:1', topics: [t]}]\nsql: SELECT * FROM t\n"
        "sinks: [{type: log}]\n"
    )
    assert outputs(spec) == []
