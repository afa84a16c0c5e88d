"""The pure alert state machine: for, keep_firing_for, late points, one transition per change."""

from __future__ import annotations

import json

import pytest

from workbench.alerts.rules import AlertRule
from workbench.alerts.state import AlertState, Evaluator, fingerprint

pytestmark = pytest.mark.unit

MIN = 60_000
CELL = {"tag_s2id": "abc"}
PINNED = "6a4d6de09b3fea32"  # fingerprint("surge", "hot-cell", {"tag_s2id": "3ac"})


def rule(**keys) -> AlertRule:
    return AlertRule.model_validate({"name": "hot", "when": "bookings > 300", **keys})


def hit(labels: dict | None = None, **values) -> dict:
    labels = CELL if labels is None else labels
    return {fingerprint("job", "hot", labels): {"labels": labels, "values": values}}


def run(evaluator: Evaluator, points: list[bool], every: int = MIN) -> list[tuple[str, int]]:
    """Feed one point per entry (true: the cell is listed); (status, at) of each transition."""
    out = []
    for i, true in enumerate(points):
        out += evaluator.step("hot", i * every, hit(bookings=400) if true else {})
    return [(t.status, t.at // every) for t in out]


def test_fingerprint_is_stable_and_order_free():
    a = fingerprint("surge", "hot", {"x": "1", "y": "2"})
    assert a == fingerprint("surge", "hot", {"y": "2", "x": "1"})
    assert len(a) == 16 and int(a, 16) >= 0
    assert a != fingerprint("surge", "hot", {"x": "2", "y": "2"})
    assert a != fingerprint("other", "hot", {"x": "1", "y": "2"})
    assert a != fingerprint("surge", "cold", {"x": "1", "y": "2"})


def test_fingerprint_is_pinned():
    """Persisted fingerprints (PagerDuty dedup keys) must keep naming the same alert."""
    assert fingerprint("surge", "hot-cell", {"tag_s2id": "3ac"}) == PINNED


def test_for_zero_fires_at_once_and_resolves_at_first_false():
    assert run(Evaluator([rule()], "job"), [True, True, False, False]) == [
        ("firing", 0),
        ("resolved", 2),
    ]


def test_for_holds_before_firing():
    ev = Evaluator([rule(**{"for": "2m"})], "job")
    assert run(ev, [True, True, True, True, False]) == [("firing", 2), ("resolved", 4)]


def test_pending_that_turns_false_goes_inactive_without_notification():
    ev = Evaluator([rule(**{"for": "2m"})], "job")
    assert run(ev, [True, True, False, True, False]) == []
    assert ev.states == {}


def test_for_restarts_after_pending_drops():
    ev = Evaluator([rule(**{"for": "2m"})], "job")
    assert run(ev, [True, False, True, True, True]) == [("firing", 4)]


def test_keep_firing_for_rides_over_a_value_flapping_every_point():
    ev = Evaluator([rule(keep_firing_for="2m")], "job")
    flapping = [i % 2 == 0 for i in range(20)]  # true, false, true, ...
    assert run(ev, [*flapping, False, False, False]) == [("firing", 0), ("resolved", 20)]


def test_without_hysteresis_flapping_notifies_every_change():
    ev = Evaluator([rule()], "job")
    got = run(ev, [i % 2 == 0 for i in range(6)])
    assert got == [("firing", 0), ("resolved", 1), ("firing", 2), ("resolved", 3),
                   ("firing", 4), ("resolved", 5)]  # fmt: skip


def test_for_suppresses_flapping_entirely():
    ev = Evaluator([rule(**{"for": "90s"})], "job")
    assert run(ev, [i % 2 == 0 for i in range(20)]) == []


def test_keep_firing_for_is_measured_from_the_last_true_point():
    ev = Evaluator([rule(keep_firing_for="3m")], "job")
    assert run(ev, [True, False, False, True, False, False, False]) == [
        ("firing", 0),
        ("resolved", 6),
    ]


def test_one_transition_per_change_with_repeated_points():
    ev = Evaluator([rule()], "job")
    out = []
    for at in (0, MIN, 2 * MIN):
        out += ev.step("hot", at, hit(bookings=400))
        out += ev.step("hot", at, hit(bookings=401))  # the same window updated
    assert [t.status for t in out] == ["firing"]
    assert ev.states[next(iter(hit()))].value == {"bookings": 401}


def test_late_point_is_ignored_for_true_and_false():
    ev = Evaluator([rule()], "job")
    assert ev.step("hot", 5 * MIN, hit(bookings=400))[0].status == "firing"
    assert ev.step("hot", 3 * MIN, {}) == []  # late false: no resolution
    assert ev.step("hot", 4 * MIN, hit(bookings=999)) == []  # late true: refreshes nothing
    state = ev.states[next(iter(hit()))]
    assert (state.status, state.last_true, state.value) == ("firing", 5 * MIN, {"bookings": 400})
    assert [t.status for t in ev.step("hot", 6 * MIN, {})] == ["resolved"]


def test_equal_point_applies_trues_but_not_falses():
    ev = Evaluator([rule()], "job")
    other = {"tag_s2id": "def"}
    assert len(ev.step("hot", MIN, {**hit(bookings=400), **hit(other, bookings=500)})) == 2
    assert ev.step("hot", MIN, hit(other, bookings=510)) == []  # cell abc not resolved
    assert len(ev.firing()) == 2


def test_transitions_carry_times_labels_and_values():
    ev = Evaluator([rule(**{"for": "1m"})], "job")
    ev.step("hot", 0, hit(bookings=310))
    [fired] = ev.step("hot", MIN, hit(bookings=350))
    assert (fired.status, fired.at, fired.starts_at, fired.ends_at) == ("firing", MIN, MIN, None)
    assert (fired.labels, fired.values, fired.rule) == (CELL, {"bookings": 350}, "hot")
    [resolved] = ev.step("hot", 2 * MIN, {})
    assert (resolved.starts_at, resolved.ends_at, resolved.at) == (MIN, 2 * MIN, 2 * MIN)
    assert resolved.fingerprint == fired.fingerprint == fingerprint("job", "hot", CELL)
    assert resolved.values == {"bookings": 350}


def test_label_sets_are_independent():
    ev = Evaluator([rule()], "job")
    a, b = {"tag_s2id": "a"}, {"tag_s2id": "b"}
    ev.step("hot", 0, {**hit(a, bookings=1), **hit(b, bookings=2)})
    out = ev.step("hot", MIN, hit(a, bookings=1))
    assert [(t.status, t.labels) for t in out] == [("resolved", b)]


def test_rules_keep_their_own_points():
    ev = Evaluator([rule(), rule(name="cold", when="bookings < 5")], "job")
    ev.step("hot", 5 * MIN, hit(bookings=400))
    cold = {fingerprint("job", "cold", CELL): {"labels": CELL, "values": {}}}
    assert [t.status for t in ev.step("cold", MIN, cold)] == ["firing"]  # not late for 'cold'


def test_unknown_rule_changes_nothing():
    ev = Evaluator([rule()], "job")
    assert ev.step("gone", 0, hit()) == [] and ev.states == {}


def test_state_survives_a_round_trip_through_json():
    ev = Evaluator([rule(keep_firing_for="2m")], "job")
    run(ev, [True, False])
    data = json.loads(json.dumps(ev.to_dict()))
    again = Evaluator.from_dict([rule(keep_firing_for="2m")], "job", data)
    assert again.states == ev.states and again.last_at == ev.last_at
    assert [t.status for t in again.step("hot", 2 * MIN, {})] == ["resolved"]
    assert AlertState.from_dict(again.states[next(iter(hit()))].to_dict()).status == "inactive"


def test_feed_takes_observation_dicts_in_order():
    ev = Evaluator([rule()], "job")
    lines = [
        {"rule": "hot", "at": 0, "firing": hit(bookings=400)},
        {"rule": "hot", "at": MIN, "firing": {}},
    ]
    assert [t.status for t in ev.feed(lines)] == ["firing", "resolved"]


def test_resolved_state_is_forgotten_after_a_while():
    ev = Evaluator([rule()], "job")
    run(ev, [True, False])
    assert ev.states
    ev.step("hot", 30 * MIN, {})
    assert ev.states == {}


@pytest.mark.parametrize("status", ["FAILED", "BACKING_OFF"])
def test_health_rules_use_the_same_machine(status):
    down = AlertRule.model_validate(
        {"name": "down", "health": "status in (FAILED, BACKING_OFF)", "for": "10s"}
    )
    ev = Evaluator([down], "job")
    fp = fingerprint("job", "down", {})
    out = []
    for second, now in enumerate([status, status, status, "RUNNING"]):
        true = down.condition is not None and down.condition.holds(now, {})
        out += ev.step("down", second * 5000, {fp: {"labels": {}, "values": {}}} if true else {})
    assert [(t.status, t.at) for t in out] == [("firing", 10_000), ("resolved", 15_000)]


def test_expire_resolves_what_fires_and_later_points_count_as_before():
    """No point will come (the input or the job stopped): expire resolves the firing
    alerts at the time given and forgets the pending ones; the rule's points go on."""
    ev = Evaluator([rule(**{"for": "2m"})], "job")
    other = {"tag_s2id": "xyz"}
    ev.step("hot", 0, hit(bookings=400))
    ev.step("hot", 2 * MIN, hit(bookings=400) | hit(other, bookings=500))  # abc fires
    [resolved] = ev.expire("hot", 99 * MIN)
    assert (resolved.status, resolved.at, resolved.ends_at) == ("resolved", 99 * MIN, 99 * MIN)
    assert resolved.labels == CELL and resolved.starts_at == 2 * MIN
    assert ev.firing() == [] and len(ev.states) == 1  # the pending xyz is forgotten
    assert ev.expire("hot", 100 * MIN) == []
    assert ev.last_at["hot"] == 2 * MIN
    again = ev.step("hot", 3 * MIN, hit(bookings=400))
    assert again == [] and ev.states[next(iter(hit()))].status == "pending"
