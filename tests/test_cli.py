"""The workbench command line, run as a user runs it (a real process, real Spark)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent
SURGE = ROOT / "workbench" / "data" / "daggers" / "surge-pricing.yaml"


def workbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=600
    )


def test_help_lists_every_command():
    out = workbench("--help").stdout
    for command in ("replay", "validate", "import-dagger", "schemas", "udfs", "demo", "setup"):
        assert command in out


def test_udfs_lists_the_registry():
    out = workbench("udfs").stdout
    for name in (
        "S2Id(lat DOUBLE, lng DOUBLE, level INT) -> string",
        "DistinctCount",
        "HistogramBucket",
        "JsonQuery",
        "StartOfWeek",
    ):
        assert name in out


def test_schemas_list_and_show():
    listed = workbench("schemas", "list").stdout.split()
    assert "esb.booking.BookingLogMessage" in listed and "esb.api.ApiLogMessage" in listed
    shown = workbench("schemas", "show", "BookingLogMessage").stdout
    assert "pickup_lat: double" in shown and "event_timestamp" in shown


def test_schemas_show_unknown_message_lists_known():
    proc = workbench("schemas", "show", "BookingMessage")
    assert proc.returncode == 1
    assert "Unknown message 'BookingMessage'" in proc.stderr
    assert "esb.booking.BookingLogMessage" in proc.stderr


def test_validate_accepts_the_demo_spec():
    proc = workbench("validate", str(SURGE), "--show-sql")
    assert proc.returncode == 0, proc.stderr
    assert "ok: dagger 'surge-pricing'" in proc.stdout
    assert (
        "output columns: tag_s2id string, tag_vehicle_type string, bookings bigint" in proc.stdout
    )


def test_validate_points_at_an_unknown_column():
    proc = workbench("validate", str(FIXTURES / "specs" / "surge-bad-field.yaml"))
    assert proc.returncode == 1
    assert "Unknown column 'stauts'" in proc.stderr
    assert "Line 3, Col: 7." in proc.stderr and "status" in proc.stderr


def test_validate_unknown_message_names_the_key():
    proc = workbench("validate", str(FIXTURES / "specs" / "unknown-message.yaml"))
    assert proc.returncode == 1
    assert "spec key 'streams[0].message'" in proc.stderr
    assert "esb.booking.BookingLogMessage" in proc.stderr


def test_import_dagger_writes_a_spec_that_validates(tmp_path):
    out = tmp_path / "imported.yaml"
    proc = workbench(
        "import-dagger", str(FIXTURES / "dagger" / "booking-s2.properties"), "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    check = workbench("validate", str(out))
    assert check.returncode == 0, check.stderr
    assert "stream data_stream: esb.booking.BookingLogMessage" in check.stdout


def test_replay_reports_unparseable_rows_with_line_numbers(tmp_path):
    rows = tmp_path / "booking.jsonl"
    rows.write_text(
        '{"order_number": "o1", "event_timestamp": "2026-11-21T10:00:05Z"}\n'
        '{"order_number": "o2", "event_timestamp": \n'
        '{"order_number": "o3", "event_timestamp": "2026-11-21T10:00:09Z"}\n'
        '{"order_number": "o4"}\n'
    )
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT count(*) AS n FROM booking GROUP BY TUMBLE(rowtime, INTERVAL '1' HOUR)")
    out = tmp_path / "out.jsonl"
    args = ["replay", "--sql", str(sql), "--table", f"booking={rows}", "--out", str(out)]
    failed = workbench(*args)
    assert failed.returncode == 1
    assert f"{rows}:2: not valid JSON" in failed.stderr
    assert f"{rows}:4: no readable event time in field 'event_timestamp'" in failed.stderr
    assert "--rejects FILE" in failed.stderr
    rejects = tmp_path / "rejects.jsonl"
    ok = workbench(*args, "--rejects", str(rejects))
    assert ok.returncode == 0, ok.stderr
    assert json.loads(out.read_text()) == {"n": 2}
    rejected = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(r["line"], r["table"]) for r in rejected] == [(2, "booking"), (4, "booking")]
    assert json.loads(rejected[1]["raw"])["order_number"] == "o4"


def test_replay_bad_sql_points_at_line_and_column(tmp_path):
    rows = tmp_path / "booking.jsonl"
    rows.write_text('{"order_number": "o1", "event_timestamp": "2026-11-21T10:00:05Z"}\n')
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT order_number,\n  count(* AS n\nFROM booking")
    proc = workbench(
        "replay",
        "--sql",
        str(sql),
        "--table",
        f"booking={rows}",
        "--out",
        str(tmp_path / "o.jsonl"),
    )
    assert proc.returncode == 1
    assert "Line 2" in proc.stderr and "Expecting )" in proc.stderr
