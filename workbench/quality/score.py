"""The quality score of one window (0 to 100), a pure function of its metric row.

    score = 100 * completeness
                * (1 - duplicate_ratio)
                * (1 - undecodable_ratio)
                * (1 - LATE_WEIGHT * late_ratio)

where ``completeness = unique / expected`` (1 when nothing was expected),
``duplicate_ratio = max(duplicates, key_duplicates) / unique``,
``undecodable_ratio = undecodable / unique`` and ``late_ratio = late / unique`` (each 0
when there is no unique record). A lost record costs a full point of completeness, a
duplicate or undecodable one as much; a late record half as much (it arrived, late).
"""

from __future__ import annotations

from collections.abc import Mapping

#: What a late record costs, relative to a lost, duplicated or undecodable one.
LATE_WEIGHT = 0.5


def ratio(part: float, whole: float) -> float:
    """``part / whole``, 0 when ``whole`` is 0, clipped to [0, 1]."""
    if whole <= 0:
        return 0.0
    return min(1.0, max(0.0, part / whole))


def completeness(unique: int, expected: int) -> float:
    """Share of the expected records that arrived (1 when none was expected)."""
    return 1.0 if expected <= 0 else ratio(unique, expected)


def score(row: Mapping[str, float | int | None]) -> float:
    """The score of a metric row (keys ``unique``, ``expected``, ``duplicates``,
    ``key_duplicates``, ``undecodable``, ``late``), rounded to 0.01."""

    def value(key: str) -> float:
        return float(row.get(key) or 0)

    unique = value("unique")
    duplicates = max(value("duplicates"), value("key_duplicates"))
    result = (
        100.0
        * completeness(int(unique), int(value("expected")))
        * (1 - ratio(duplicates, unique))
        * (1 - ratio(value("undecodable"), unique))
        * (1 - LATE_WEIGHT * ratio(value("late"), unique))
    )
    return round(result, 2)
