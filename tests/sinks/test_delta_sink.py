"""The Delta sink on the real broker: exact rows, a replayed batch skipped on restart,
compaction of closed hour partitions into fewer files with the same rows, and a reader
during compaction seeing every row once.

The job runs in its own process (``delta_scenario.py``): Delta needs its SQL extension
when a Spark session starts, which the test session's has not, so the scenario pays one
Spark start for all its steps and these tests read what it saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from geo_reference import surge_windows
from streaming import START, closed, new_topic, publish_events, surge_spec

SCENARIO = Path(__file__).with_name("delta_scenario.py")


@pytest.fixture(scope="module")
def scenario(kafka_broker, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("delta")
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "delta-in")
    # ~2.8 hours of event time: three hour partitions, the newest one still open
    published = publish_events(
        bootstrap, topic, 600, rate_per_s=0.06, start=START - timedelta(hours=1)
    )
    table = tmp / "table"
    spec = surge_spec(
        bootstrap,
        topic,
        tmp,
        [
            {"type": "delta", "path": str(table)},
            {"type": "delta", "path": str(tmp / "compacting"), "compact_every": 1},
        ],
        stream_options={"max_offsets_per_trigger": 600},
    )
    (tmp / "spec.yaml").write_text(spec.to_yaml())
    out = tmp / "out.json"
    proc = subprocess.run(
        [sys.executable, str(SCENARIO), str(tmp / "spec.yaml"), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = closed(surge_windows(published.events), published.events)
    result = json.loads(out.read_text())
    result["expected"] = Counter((k, v) for k, v in expected.items())
    result["sink"] = f"delta {table}"
    return result


def counted(rows) -> Counter:
    return Counter(((r[0], r[1], r[2]), (r[3], r[4])) for r in rows)


def test_the_table_holds_each_closed_window_once(scenario, record_property):
    record_property("figure", f"delta scenario seconds: {scenario['seconds']}")
    assert len(scenario["expected"]) > 100
    assert counted(scenario["rows"]) == scenario["expected"]
    written = scenario["written"][0][scenario["sink"]]
    assert written == sum(scenario["expected"].values())


def test_a_replayed_batch_is_skipped_and_reported(scenario):
    assert scenario["replayed_batch"] > 0
    assert scenario["written"][1].get(scenario["sink"], 0) == 0
    assert scenario["skipped"][1][scenario["sink"]] > 0


def test_compaction_leaves_closed_hours_in_one_file_and_the_newest_alone(scenario):
    before, after = scenario["before"], scenario["after"]
    newest = max(before)
    assert len(before) == 3 and all(files > 1 for files in before.values()), before
    lines = scenario["compact_out"].splitlines()
    compacted = [line.split(":")[0] for line in lines[:-1]]
    assert compacted == sorted(set(before) - {newest}), scenario["compact_out"]
    assert lines[-1].startswith(f"compacted {len(compacted)} closed partitions")
    assert after == {**dict.fromkeys(compacted, 1), newest: before[newest]}
    assert counted(scenario["rows_at_version"]) == scenario["expected"]  # old snapshot too


def test_a_sink_compacting_every_batch_ends_as_compacted(scenario):
    """``compact_every: 1``: the job compacts each hour once the next one has begun."""
    assert scenario["compacting"]["after"] == scenario["after"]
    assert counted(scenario["compacting"]["rows"]) == scenario["expected"]


def test_a_reader_during_compaction_sees_every_row_once(scenario):
    assert scenario["reads_during"], f"no read overlapped the compaction ({scenario['reads']})"
    for seen in scenario["reads_during"]:
        assert counted(seen) == scenario["expected"]


def test_a_quality_job_reconciles_with_the_table(scenario):
    """``reconcile: {format: delta}``: rows per 10-minute window as the table holds them
    (a row at its window's end counts in the window holding end − 1 ms), 0 where none."""
    window = 600_000
    want: Counter = Counter()
    for ((_, _, end), _), n in scenario["expected"].items():
        want[(end - 1) // window * window] += n
    found = {int(start): n for start, n in scenario["reconciled"].items()}
    assert found == {**dict(want), 0: 0}
