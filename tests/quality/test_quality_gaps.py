"""Offset gaps: records lost below the log start count as missing; markers and compaction
gaps (at or above it) do not."""

from __future__ import annotations

import pytest

from workbench.quality.gaps import Gap, lost, missing

pytestmark = pytest.mark.unit


def test_a_gap_below_the_log_start_is_missing():
    # read 99, next read 150: 100..149 deleted (log start now 150)
    assert missing(Gap("t", 0, 99, 150), log_start=150) == 50


def test_a_gap_above_the_log_start_is_a_marker_or_compaction():
    assert missing(Gap("t", 0, 99, 101), log_start=0) == 0  # a commit marker at 100
    assert missing(Gap("t", 0, 10, 40), log_start=5) == 0  # aborted or compacted


def test_only_the_part_below_the_log_start_is_missing():
    # 100..119 deleted, 120..149 compacted away (log start 120)
    assert missing(Gap("t", 0, 99, 150), log_start=120) == 20
    # log start moved past the record read later: the gap itself at most
    assert missing(Gap("t", 0, 99, 150), log_start=400) == 50
    assert Gap("t", 0, 99, 150).size == 50


def test_log_start_asked_once_per_partition():
    asked = []

    def log_start(topic, partition):
        asked.append((topic, partition))
        return 100

    gaps = [Gap("t", 0, 10, 20), Gap("t", 0, 50, 120), Gap("t", 1, 5, 7)]
    assert lost(gaps, log_start) == {gaps[0]: 9, gaps[1]: 49, gaps[2]: 1}
    assert asked == [("t", 0), ("t", 1)]
