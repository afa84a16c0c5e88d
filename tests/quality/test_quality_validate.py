"""``workbench validate`` of a ``kind: quality`` spec: no Spark starts; each fault names its
key and the line of the file (the command in-process, as the CLI runs it)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from workbench.cli.main import main

pytestmark = pytest.mark.unit

STREAM = {"topics": ["booking-log"], "message": "esb.booking.BookingLogMessage"}
BASE = {"kind": "quality", "name": "bookings-quality", "team": "pricing", "streams": [STREAM]}


def validate(tmp_path, capsys, **keys) -> tuple[int, str, str]:
    path = tmp_path / "quality.yaml"
    path.write_text(yaml.safe_dump({**BASE, **keys}, sort_keys=False))
    code = main(["validate", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err.replace(str(path), "SPEC")


def test_a_valid_quality_spec_is_reported(tmp_path, capsys):
    warehouse = tmp_path / "warehouse" / "dt=2026-11-25"
    warehouse.mkdir(parents=True)
    pq.write_table(pa.table({"window_timestamp": [1], "bookings": [2]}), warehouse / "p.parquet")
    code, out, err = validate(
        tmp_path, capsys, business_key="order_number", window="5m",
        sinks=[{"type": "parquet", "path": str(tmp_path / "metrics")}],
        alerts=[{"name": "low", "when": "score < 95", "group_by": ["tag_topic"]}],
        reconcile={"path": str(tmp_path / "warehouse"), "count_column": "bookings"},
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "ok: quality job 'bookings-quality' (team pricing)",
        "  stream records: esb.booking.BookingLogMessage from booking-log "
        "(event time: event_timestamp)",
        "  window: 5m; allowed lateness: 30m; late after: 1m; business key: order_number",
        "  alerts: low (metric)",
        "  sinks: parquet",
        f"  reconcile: {tmp_path / 'warehouse'} (columns window_timestamp, bookings)",
    ]


@pytest.mark.parametrize(
    ("keys", "error"),
    [
        ({"windw": "5m"}, "SPEC, line 8: spec key 'windw': unknown key. Did you mean 'window'?"),
        ({"window": "10x"}, "SPEC, line 8: spec key 'window': '10x' is not a duration"),
        (
            {"streams": [{**STREAM, "message": "esb.booking.BookingMessage"}]},
            "SPEC, line 7: spec key 'streams[0].message': Unknown message",
        ),
        (
            {"streams": [{**STREAM, "event_timestamp_field": "event_time"}]},
            "SPEC, line 8: spec key 'streams[0].event_timestamp_field': Unknown field",
        ),
        (
            {"business_key": "order_numbr"},
            "SPEC, line 8: spec key 'business_key': Unknown field 'order_numbr' in "
            "esb.booking.BookingLogMessage. Did you mean order_number or order_url?",
        ),
        (
            {"alerts": [{"name": "low", "when": "scor < 95"}]},
            "SPEC, line 10: spec key 'alerts[0].when': Unknown column 'scor'",
        ),
        (
            {"reconcile": {"path": "WAREHOUSE", "time_column": "window_start"}},
            "SPEC, line 10: spec key 'reconcile.time_column': Unknown column 'window_start'",
        ),
    ],
    ids=["key", "duration", "message", "event-time", "business-key", "alert", "reconcile"],
)
def test_each_fault_names_its_key(tmp_path, capsys, keys, error):
    if "reconcile" in keys:
        (tmp_path / "w").mkdir()
        pq.write_table(pa.table({"window_timestamp": [1]}), tmp_path / "w" / "p.parquet")
        keys = {"reconcile": {**keys["reconcile"], "path": str(tmp_path / "w")}}
    code, out, err = validate(tmp_path, capsys, **keys)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {error}"), err
