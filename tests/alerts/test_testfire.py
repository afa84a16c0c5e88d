"""Test-fire: rules over preview/replay rows, shown as firing windows; the CLI over recordings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml
from cli_runner import workbench
from geo_reference import surge_windows
from streaming import START, SURGE_SQL

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import Evaluator, Transition, fingerprint
from workbench.alerts.testfire import AlertTest, evaluate, rules_of
from workbench.dev.generator import Generator, write_jsonl
from workbench.exceptions import SpecError, WorkbenchError

pytestmark = pytest.mark.unit

MIN = 60_000
HOT = {
    "name": "busy-cell",
    "when": "bookings >= 2",
    "group_by": ["tag_s2id", "tag_vehicle_type"],
    "keep_firing_for": "1m",
    "summary": "{tag_s2id} {tag_vehicle_type}: {bookings} bookings",
}


def test_windows_pair_firing_with_resolved():
    rule = AlertRule.model_validate({**HOT, "group_by": ["tag_s2id"]})
    a, b = {"tag_s2id": "a"}, {"tag_s2id": "b"}
    fa, fb = fingerprint("j", rule.name, a), fingerprint("j", rule.name, b)
    transitions = [
        Transition(fa, rule.name, a, "firing", 0, 0, None, {"bookings": 3}),
        Transition(fb, rule.name, b, "firing", MIN, MIN, None, {"bookings": 5}),
        Transition(fa, rule.name, a, "resolved", 2 * MIN, 0, 2 * MIN, {"bookings": 3}),
    ]
    test = AlertTest("j", [rule], transitions, points=3)
    assert [(w["labels"], w["firing_at"], w["resolved_at"]) for w in test.windows()] == [
        (a, 0, 2 * MIN),
        (b, MIN, None),
    ]
    rows = test.rows
    assert list(rows.columns) == ["rule", "labels", "firing_at", "resolved_at", "values",
                                  "summary"]  # fmt: skip
    assert rows.iloc[0].to_dict() == {
        "rule": "busy-cell", "labels": "tag_s2id=a", "firing_at": "1970-01-01T00:00:00Z",
        "resolved_at": "1970-01-01T00:02:00Z", "values": "bookings=3",
        "summary": "a {tag_vehicle_type}: 3 bookings",
    }  # fmt: skip
    assert "2 firing window(s), 1 still firing" in repr(test)
    assert "<table" in test._repr_html_()


def test_rules_of_needs_rules():
    with pytest.raises(WorkbenchError, match="add an 'alerts:' list"):
        rules_of(None, None)
    assert rules_of(None, [HOT])[0].name == "busy-cell"


def expected_windows(events, rule: AlertRule, job: str) -> list[tuple]:
    """The firing windows by hand: the surge windows computed in Python, fed in window order
    to the state machine."""
    windows = surge_windows(events)
    evaluator = Evaluator([rule], job)
    transitions = []
    for end in sorted({k[2] for k in windows}):
        firing = {}
        for (cell, vehicle, at), (bookings, _) in windows.items():
            if at == end and bookings >= 2:
                labels = {"tag_s2id": cell, "tag_vehicle_type": vehicle}
                firing[fingerprint(job, rule.name, labels)] = {"labels": labels, "values": {}}
        transitions += evaluator.step(rule.name, end, firing)
    return windows_of(AlertTest(job, [rule], transitions))


def windows_of(test: AlertTest) -> list[tuple]:
    """(labels, firing at, resolved at) of each firing window, in time then label order."""
    found = [(w["labels"], w["firing_at"], w["resolved_at"]) for w in test.windows()]
    return sorted(found, key=lambda w: (w[1], sorted(w[0].items())))


@pytest.fixture(scope="module")
def bookings():
    return Generator(seed=5, start=START, rate_per_s=8, out_of_order_seconds=3).take(
        "bookings", 3000
    )


def test_evaluate_over_result_rows_matches_the_windows_by_hand(spark, bookings, tmp_path):
    from workbench.lab.replay import plan_recordings
    from workbench.spec import parse

    write_jsonl(tmp_path / "booking.jsonl", bookings)
    spec = parse(spec_data(alerts=[HOT]))
    plan, _ = plan_recordings(spark, {"booking": str(tmp_path / "booking.jsonl")}, spec=spec)
    test = evaluate(plan.result, spec.alerts, spec.name)
    expected = expected_windows(bookings, spec.alerts[0], spec.name)
    assert len(expected) > 5 and any(r for _, _, r in expected)
    assert windows_of(test) == expected
    assert test.points == len({k[2] for k in surge_windows(bookings)})


def test_evaluate_checks_columns_first(spark):
    frame = spark.createDataFrame([(1, 2)], "a long, b long")
    with pytest.raises(SpecError, match="Unknown column 'bookings'"):
        evaluate(frame, [AlertRule.model_validate(HOT)], "j")


@pytest.mark.integration
def test_cli_test_fires_over_recordings(bookings, tmp_path):
    write_jsonl(tmp_path / "booking.jsonl", bookings)
    path = tmp_path / "spec.yaml"
    health = {"name": "down", "health": "status in (FAILED)"}
    path.write_text(yaml.safe_dump(spec_data(alerts=[HOT, health])))
    done = workbench("alerts", "test", path, "--table", f"booking={tmp_path / 'booking.jsonl'}")
    assert done.returncode == 0, done.stderr
    spec_rule = AlertRule.model_validate(HOT)
    expected = expected_windows(bookings, spec_rule, "surge-alerts")
    still = sum(1 for *_, r in expected if r is None)
    assert f"{len(expected)} firing window(s), {still} still firing" in done.stdout
    assert "not test-fired (health rules, the job service's): down" in done.stdout
    first = expected[0]
    stamp = datetime.fromtimestamp(first[1] / 1000, UTC).isoformat().replace("+00:00", "Z")
    assert stamp in done.stdout and first[0]["tag_s2id"] in done.stdout


@pytest.mark.integration
def test_cli_refuses_a_spec_without_rules_and_bad_columns(bookings, tmp_path):
    write_jsonl(tmp_path / "booking.jsonl", bookings[:50])
    table = f"booking={tmp_path / 'booking.jsonl'}"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec_data()))
    done = workbench("alerts", "test", path, "--table", table)
    assert done.returncode == 1 and "add an 'alerts:' list" in done.stderr
    path.write_text(yaml.safe_dump(spec_data(alerts=[{**HOT, "when": "bookngs > 2"}])))
    done = workbench("alerts", "test", path, "--table", table)
    assert done.returncode == 1
    assert "spec key 'alerts[0].when': Unknown column 'bookngs'" in done.stderr
    assert "Did you mean bookings?" in done.stderr


def spec_data(**extra) -> dict:
    return {
        "name": "surge-alerts",
        "streams": [
            {
                "table": "booking",
                "message": "esb.booking.BookingLogMessage",
                "topics": ["booking-log"],
            }
        ],
        "sql": SURGE_SQL,
        **extra,
    }
