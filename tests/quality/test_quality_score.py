"""The quality score formula and its ratios (pure functions)."""

from __future__ import annotations

import pytest

from workbench.quality.score import LATE_WEIGHT, completeness, ratio, score

pytestmark = pytest.mark.unit


def test_a_clean_window_scores_100():
    assert score({"unique": 1000, "expected": 1000}) == 100.0


def test_nothing_expected_is_complete_and_scores_100():
    assert completeness(0, 0) == 1.0
    assert score({}) == 100.0


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"unique": 950, "expected": 1000}, 95.0),  # 5% lost
        ({"unique": 1000, "expected": 1000, "duplicates": 10}, 99.0),  # 1% duplicated
        ({"unique": 1000, "expected": 1000, "key_duplicates": 20, "duplicates": 10}, 98.0),
        ({"unique": 1000, "expected": 1000, "undecodable": 30}, 97.0),
        ({"unique": 1000, "expected": 1000, "late": 20}, 100 * (1 - LATE_WEIGHT * 0.02)),
        (
            {"unique": 980, "expected": 1000, "duplicates": 10, "late": 20},
            round(100 * 0.98 * (1 - 10 / 980) * (1 - 0.5 * 20 / 980), 2),
        ),
    ],
)
def test_each_fault_costs_its_share(row, expected):
    assert score(row) == pytest.approx(expected, abs=0.01)


def test_ratios_are_clipped_and_safe_with_nothing():
    assert ratio(5, 0) == 0.0
    assert ratio(15, 10) == 1.0
    assert score({"unique": 10, "expected": 10, "duplicates": 50}) == 0.0
