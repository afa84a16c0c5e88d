"""The metric rows a quality job keeps for the service: the last emission of each window."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench.quality import history

pytestmark = pytest.mark.unit


def row(topic, window_ms, batch, total):
    start = datetime.fromtimestamp(window_ms / 1000, UTC)
    return {"tag_topic": topic, "window_timestamp": start, "emitted_batch": batch, "total": total}


def test_a_window_emitted_again_is_read_once_with_its_last_counts(tmp_path):
    history.append(tmp_path, [row("a", 600_000, 0, 10), row("b", 0, 0, 5)])
    history.append(tmp_path, [row("a", 0, 1, 7), row("a", 600_000, 1, 12)])
    history.path_of(tmp_path).open("a").write('{"cut')  # a crash mid-line
    found = history.read(tmp_path)
    assert [(r["tag_topic"], r["window_timestamp"], r["total"]) for r in found] == [
        ("a", 0, 7),
        ("a", 600_000, 12),
        ("b", 0, 5),
    ]
    assert [r["total"] for r in history.read(tmp_path, since_ms=600_000)] == [12]
    assert history.read(tmp_path / "none") == []


def test_the_file_is_compacted_to_its_retention_once_large(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "MAX_BYTES", 2000)
    day = 86_400_000
    for batch in range(40):  # each window emitted twice, a window a batch, days apart
        history.append(tmp_path, [row("a", batch // 2 * day, batch, batch)], keep_ms=3 * day)
    path = history.path_of(tmp_path)
    assert path in history._compacted and path.stat().st_size <= 2000 + 200
    found = history.read(tmp_path)
    starts = [r["window_timestamp"] // day for r in found]
    assert starts[0] > 0 and starts == list(range(starts[0], 20))  # old windows dropped
    assert [r["total"] for r in found][-1] == 39  # the last emission of each window kept
    history.compact(tmp_path, 3 * day)
    assert [r["window_timestamp"] // day for r in history.read(tmp_path)] == [16, 17, 18, 19]
    assert len(path.read_text().splitlines()) == 4
