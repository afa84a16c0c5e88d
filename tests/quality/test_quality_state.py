"""The quality run's state: one file per batch; a replayed batch starts where it first did."""

from __future__ import annotations

import pytest

from workbench.quality.state import KEEP, QualityState, StateFiles

pytestmark = pytest.mark.unit


def test_a_batch_starts_from_the_latest_state_before_it(tmp_path):
    files = StateFiles(tmp_path)
    assert files.before(0) == QualityState()
    files.save(0, QualityState(1000, {"t/0": 5}, {"0": 0}))
    files.save(1, QualityState(2000, {"t/0": 9}, {"0": 0, "1": 600}))
    assert files.before(1).max_event_ms == 1000  # a replay of batch 1
    assert files.before(2).last_offsets == {"t/0": 9}


def test_old_files_are_pruned(tmp_path):
    files = StateFiles(tmp_path)
    for n in range(KEEP + 5):
        files.save(n, QualityState(n))
    assert len(list(tmp_path.glob("*.json"))) == KEEP + 1


def test_windows_close_behind_the_largest_event_time_by_the_lateness():
    state = QualityState(max_event_ms=3_600_000)
    assert state.watermark(600_000) == 3_000_000
    assert state.closed(2_400_000, 600_000, 600_000)  # ends at the watermark
    assert not state.closed(2_500_000, 600_000, 600_000)
    assert not QualityState().closed(0, 1, 1)
