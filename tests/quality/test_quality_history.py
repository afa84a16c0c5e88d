"""The metric rows a quality job keeps for the service: the last emission of each window."""

from __future__ import annotations

from datetime import UTC, datetime

from workbench.quality import history


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
