"""A micro-batch's summary (one Spark job's rows): what it drops, touches and keeps as state,
and whether its offsets run on without a gap (here from made-up rows; the quality job's
tests run it on the real broker)."""

from __future__ import annotations

import pytest

from workbench.quality.state import QualityState
from workbench.quality.summary import Group, Summary

pytestmark = pytest.mark.unit

W = 600_000


def summary(*groups: Group) -> Summary:
    return Summary(list(groups), closed=lambda start: start < W)  # window 0 closed


def test_drops_touches_and_the_next_state():
    found = summary(
        Group("a", 0, 0, 3, 10, 12, 100),  # closed window: dropped
        Group("a", 0, W, 5, 13, 20, W + 5),
        Group("a", 1, 2 * W, 2, 0, 1, 2 * W + 9),
        Group("b", 0, W, 1, 7, 7, None),  # undecodable: no event time
    )
    assert found.dropped == 3
    assert found.touched == {("a", W), ("a", 2 * W), ("b", W)}
    state = found.next_state(QualityState(W, {"a/0": 9, "c/0": 4}, {"3": W}), 4)
    assert state.max_event_ms == 2 * W + 9
    assert state.last_offsets == {"a/0": 20, "a/1": 1, "b/0": 7, "c/0": 4}
    assert state.folders == {"3": W, "4": 2 * W}
    assert summary(Group("a", 0, 0, 1, 5, 5, 1)).next_state(QualityState(), 0).folders == {}


def test_offsets_run_on_or_not():
    after = QualityState(None, {"a/0": 9})
    interleaved = (Group("a", 0, W, 3, 10, 14, 1), Group("a", 0, 2 * W, 2, 11, 13, 1))
    assert summary(*interleaved).contiguous(after)  # windows share the offsets 10 to 14
    assert not summary(Group("a", 0, W, 3, 10, 13, 1)).contiguous(after)  # 4 offsets, 3 read
    assert not summary(Group("a", 0, W, 3, 11, 13, 1)).contiguous(after)  # 10 skipped
    assert summary(Group("b", 0, W, 3, 40, 42, 1)).contiguous(after)  # first seen
