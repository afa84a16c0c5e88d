"""Event time is kept to the millisecond, as Flink's (so Dagger's) rowtime is.

An interval join whose bounds differ only below the millisecond: with microsecond rowtimes
Spark would drop the first two pairs; Dagger joins them. Checked in replay (the CLI, batch)
and on streaming inputs, both through ``engine.build``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from workbench import engine

pytestmark = pytest.mark.integration

SQL = (
    "SELECT a.id, a.rowtime AS a_time, b.rowtime AS b_time, a.ts AS a_ts FROM a JOIN b "
    "ON a.id = b.id AND b.rowtime BETWEEN a.rowtime AND a.rowtime + INTERVAL '5' MINUTE"
)
A = [
    {"id": 1, "ts": "2026-11-21T08:00:00.000900Z"},
    {"id": 2, "ts": "2026-11-21T08:00:00.000000Z"},
    {"id": 3, "ts": "2026-11-21T08:00:00.000000Z"},
]
B = [
    {"id": 1, "ts": "2026-11-21T08:00:00.000100Z"},  # 0.8 ms before a's: the same millisecond
    {"id": 2, "ts": "2026-11-21T08:05:00.000500Z"},  # 0.5 ms past the upper bound: in it
    {"id": 3, "ts": "2026-11-21T08:05:00.001000Z"},  # a whole millisecond past: out
]


def write(folder: Path, name: str, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_replay_joins_at_millisecond_precision(tmp_path):
    query = tmp_path / "join.sql"
    query.write_text(SQL)
    out = tmp_path / "out.jsonl"
    a, b = write(tmp_path / "a", "a", A), write(tmp_path / "b", "b", B)
    cmd = [sys.executable, "-m", "workbench.cli.main", "replay", "--sql", str(query)]
    cmd += ["--table", f"a={a}", "--table", f"b={b}", "--rowtime-field", "ts", "--out", str(out)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = sorted(map(json.loads, out.read_text().splitlines()), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == [1, 2]
    assert [(r["a_time"], r["b_time"]) for r in rows] == [
        ("2026-11-21T08:00:00.000Z", "2026-11-21T08:00:00.000Z"),
        ("2026-11-21T08:00:00.000Z", "2026-11-21T08:05:00.000Z"),
    ]


def test_streaming_inputs_join_at_millisecond_precision(spark, tmp_path):
    inputs = []
    for name, rows in (("a", A), ("b", B)):
        folder = write(tmp_path / name, name, rows).parent
        frame = spark.readStream.schema("id INT, ts STRING").json(str(folder))
        inputs.append(engine.Input(name, frame, "ts"))
    plan = engine.build(spark, SQL, inputs, job="ms", watermark_delay_ms=60_000)
    name = f"ms_join_{uuid.uuid4().hex[:6]}"
    query = plan.result.writeStream.format("memory").queryName(name)
    query.trigger(availableNow=True).start().awaitTermination(240)
    rows = sorted(spark.table(name).collect(), key=lambda r: r.id)
    assert [r.id for r in rows] == [1, 2]
    assert rows[0].a_time.microsecond == 0 and rows[0].a_ts.microsecond == 900  # field: µs
