"""Parity of preview rows (pandas' JSON) and replay rows (Spark's JSON): data-driven cases,
each a title, the two sides, and the rows expected only in the preview / only in the replay."""

from __future__ import annotations

import pytest

from workbench.lab.parity import compare

pytestmark = pytest.mark.unit

TS_PANDAS = "2026-11-24T13:01:00.000000"  # DataFrame.to_json(date_format="iso", date_unit="us")
TS_SPARK = "2026-11-24T13:01:00.000Z"  # workbench.lab.results.TIMESTAMP_FORMAT

CASES = [
    ("same rows in another order",
     [{"k": "a", "n": 1}, {"k": "b", "n": 2}], [{"k": "b", "n": 2}, {"k": "a", "n": 1}], 0, 0),
    ("timestamps of any precision and zone name the same instant",
     [{"w": TS_PANDAS}], [{"w": TS_SPARK}], 0, 0),
    ("a timestamp one millisecond apart differs",
     [{"w": TS_PANDAS}], [{"w": "2026-11-24T13:01:00.001Z"}], 1, 1),
    ("an offset moves the instant",
     [{"w": "2026-11-24T14:01:00+01:00"}], [{"w": TS_SPARK}], 0, 0),
    ("floats within 1e-9 relative",
     [{"r": 0.0139534884}], [{"r": 0.013953488372093023}], 1, 1),  # pandas' default 10 digits
    ("floats to 15 digits pass",
     [{"r": 0.013953488372093}], [{"r": 0.013953488372093023}], 0, 0),
    ("an integral float equals the integer (pandas makes nullable ints floats)",
     [{"n": 3.0}], [{"n": 3}], 0, 0),
    ("NaN is NULL", [{"n": float("nan")}], [{"n": None}], 0, 0),
    ("a count that differs", [{"k": "a", "n": 1}], [{"k": "a", "n": 2}], 1, 1),
    ("duplicates count", [{"k": "a"}, {"k": "a"}], [{"k": "a"}], 1, 0),
    ("maps compare by key", [{"m": {"x": 1, "y": 2}}], [{"m": {"y": 2, "x": 1}}], 0, 0),
    ("floats pair within a group, whatever the order",
     [{"k": "a", "r": 0.5}, {"k": "a", "r": 0.25}], [{"k": "a", "r": 0.25}, {"k": "a", "r": 0.5}],
     0, 0),
    ("text that is not a timestamp stays text", [{"s": "2026-11-24"}], [{"s": "2026-11-24"}], 0, 0),
]  # fmt: skip


@pytest.mark.parametrize(("preview", "replay", "left", "right"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_compare(preview, replay, left, right):
    diff = compare(preview, replay)
    assert (len(diff.only_preview), len(diff.only_replay)) == (left, right)
    assert bool(diff) == bool(left or right)


def test_other_columns_are_named():
    diff = compare([{"a": 1}], [{"b": 1}])
    assert diff.columns == (["a"], ["b"])
    assert "columns: preview ['a'], replay ['b']" in diff.describe()


def test_a_truncated_preview_needs_only_its_rows_in_the_replay():
    assert not compare([{"n": 1}], [{"n": 1}, {"n": 2}], subset=True)
    assert compare([{"n": 3}], [{"n": 1}, {"n": 2}], subset=True).only_preview == [{"n": 3}]


def test_describe_shows_ten_rows_of_each_side():
    diff = compare([{"n": i} for i in range(12)], [])
    text = diff.describe()
    assert "only in the preview: 12 row(s) (first 10)" in text
    assert text.count('{"n": ') == 10
