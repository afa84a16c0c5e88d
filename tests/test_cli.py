"""The workbench command line, run as a user runs it (a real process, real Spark)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import workbench
from jobs.service_process import test_home as make_home
from specfiles import spec_file

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent
SURGE = ROOT / "workbench" / "data" / "daggers" / "surge-pricing.yaml"
#: The line replay and validate print on stderr once Spark is up.
SPARK_STARTED = (
    r"spark: started in \d+\.\ds \(jars \d+\.\ds, JVM \d+\.\ds, SparkContext \d+\.\ds, "
    r"session \d+\.\ds, UDFs \d+\.\ds\)\n"
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


@pytest.mark.integration
def test_validate_accepts_the_demo_spec():
    proc = workbench("validate", str(SURGE), "--show-sql")
    assert proc.returncode == 0, proc.stderr
    assert "ok: dagger 'surge-pricing'" in proc.stdout
    assert re.fullmatch(SPARK_STARTED, proc.stderr), proc.stderr  # stdout: the report alone
    assert (
        "output columns: tag_s2id string, tag_vehicle_type string, bookings bigint" in proc.stdout
    )


@pytest.mark.integration
def test_spark_output_goes_to_the_cli_log_not_the_terminal(tmp_path):
    env = {**os.environ, "WORKBENCH_HOME": str(make_home(tmp_path))}  # its own: a fresh log
    quiet = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "validate", str(SURGE)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert quiet.returncode == 0, quiet.stderr
    assert re.fullmatch(SPARK_STARTED, quiet.stderr)  # no JVM start-up lines, no log4j warnings
    log = (tmp_path / "logs" / "spark-cli.log").read_text()
    assert "Setting default log level" in log
    loud = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", "validate", str(SURGE)],
        capture_output=True, text=True, timeout=600,
        env={**env, "WORKBENCH_SPARK_LOG": "stderr"},
    )  # fmt: skip
    assert "Setting default log level" in loud.stderr


@pytest.mark.integration
def test_validate_points_at_an_unknown_column():
    proc = workbench("validate", str(FIXTURES / "specs" / "surge-bad-field.yaml"))
    assert proc.returncode == 1
    assert "Unknown column 'stauts'" in proc.stderr
    assert "Line 3, Col: 7." in proc.stderr and "status" in proc.stderr


@pytest.mark.integration
def test_validate_checks_alert_rules_against_the_result_columns(tmp_path):
    import yaml

    data = yaml.safe_load(SURGE.read_text())
    hot = {"name": "hot-cell", "when": "bookings > 300", "group_by": ["tag_s2id"]}
    data["alerts"] = [hot, {"name": "down", "health": "status in (FAILED, BACKING_OFF)"}]
    path = tmp_path / "alerts.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = workbench("validate", path)
    assert proc.returncode == 0, proc.stderr
    assert "alerts: hot-cell (metric), down (health)" in proc.stdout
    data["alerts"][0]["when"] = "bookings > 300 AND unique_customer > 2"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = workbench("validate", path)
    line = next(
        i for i, t in enumerate(path.read_text().splitlines(), 1) if "unique_customer " in t
    )
    assert proc.returncode == 1
    assert f"{path}, line {line}: spec key 'alerts[0].when': Unknown column 'unique_customer'" in (
        proc.stderr
    )
    assert "Did you mean unique_customers?" in proc.stderr and "Line 1, Col: 20." in proc.stderr


def test_validate_unknown_message_names_the_key():
    proc = workbench("validate", str(FIXTURES / "specs" / "unknown-message.yaml"))
    assert proc.returncode == 1
    assert "spec key 'streams[0].message'" in proc.stderr
    assert "esb.booking.BookingLogMessage" in proc.stderr


@pytest.mark.integration
def test_import_dagger_writes_a_spec_that_validates(tmp_path):
    out = tmp_path / "imported.yaml"
    proc = workbench(
        "import-dagger", str(FIXTURES / "dagger" / "booking-s2.properties"), "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    check = workbench("validate", str(out))
    assert check.returncode == 0, check.stderr
    assert "stream data_stream: esb.booking.BookingLogMessage" in check.stdout


@pytest.mark.integration
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
    assert re.fullmatch(SPARK_STARTED, ok.stderr), ok.stderr
    assert "spark: " not in failed.stderr  # the recording failed its checks before Spark
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


@pytest.mark.integration
def test_validate_rejects_what_the_streaming_job_would_reject(tmp_path):
    one_sided = "SELECT s0.order_number FROM s0 JOIN s1 ON s1.rowtime >= s0.rowtime"
    proc = workbench("validate", spec_file(tmp_path, one_sided))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("error: The SQL cannot run as a streaming job: ")
    assert "without equality predicate" in lines[-1] and "INTERVAL '5' MINUTE" in lines[-1]
    assert "Traceback" not in proc.stderr and "\tat org.apache" not in proc.stderr


@pytest.mark.integration
def test_validate_names_the_sink_that_cannot_take_the_query_columns(tmp_path):
    # each sink's check: tests/test_validate.py
    sql = "SELECT order_number AS tag_order, rowtime AS booked FROM s0"
    sink = {"type": "parquet", "path": str(tmp_path / "out")}
    proc = workbench("validate", spec_file(tmp_path, sql, [sink]))
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "line 12: spec key 'sinks[0]': " in last and "no column 'window_timestamp'" in last


def test_validate_reports_bad_sql_in_one_error_before_spark_starts(tmp_path):
    cases = [
        (
            "SELECT " + "(" * 10_000 + "1" + ")" * 10_000 + " AS x FROM s0",
            "The SQL nests parentheses more than 100 deep",
        ),
        (
            "SELECT count(*) AS n FROM s0 GROUP BY TUMBLE(rowtime, INTERVAL '0' SECOND)",
            "A window size must be positive, not INTERVAL '0' SECOND",
        ),
        (
            "SELECT count(*) AS n FROM s0 GROUP BY TUMBLE(rowtime, INTERVAL '-1' MINUTE)",
            "A window size must be positive, not INTERVAL '-1' MINUTE",
        ),
        (
            "SELECT S2Id(pickup_lat, pickup_long, 31) AS s FROM s0",
            "S2Id's level is 31: it must be between 0 and 30.",
        ),
        (
            "SELECT S2Id(pickup_lat, pickup_long, -1) AS s FROM s0",
            "S2Id's level is -1: it must be between 0 and 30.",
        ),
        (
            "SELECT order_number FROM s0 WHERE status = 'COMPLETE'",
            "'COMPLETE' is not a value of the enum field 'status', so this comparison never "
            "holds. Did you mean COMPLETED? Known: BOOKING_STATUS_UNKNOWN, CANCELLED, COMPLETED,",
        ),
    ]
    for sql, message in cases:
        proc = workbench("validate", spec_file(tmp_path, sql))
        assert proc.returncode == 1, sql[:80]
        assert proc.stderr.startswith(f"error: {message}"), proc.stderr[:300]
        assert "Line 1, Col: " in proc.stderr.splitlines()[0]
        assert len(proc.stderr.splitlines()) == 3 and len(proc.stderr) < 600  # message, SQL, ^^^
