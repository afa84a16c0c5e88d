"""The rules that place a query's micro-batch in a file-sink log, over real folders
(the end-to-end edit path is in ``test_generations.py``)."""

from __future__ import annotations

import pytest

from workbench.exceptions import SinkGenerationError
from workbench.sinks.generations import Generations, Placement, latest_logged

pytestmark = pytest.mark.unit


def log(folder, *ids):
    (folder / "_spark_metadata").mkdir(parents=True, exist_ok=True)
    for i in ids:
        name = f"{i}.compact" if (i + 1) % 10 == 0 else str(i)
        (folder / "_spark_metadata" / name).write_text("v1\n")


def test_a_new_query_continues_after_the_log(tmp_path):
    log(tmp_path, *range(9))
    assert latest_logged(tmp_path) == 8
    gens = Generations(tmp_path, "parquet p")
    assert gens.place("q2", 0, "c2") == Placement(9, committed=False)
    log(tmp_path, 9)
    assert gens.place("q2", 0, "c2") == Placement(9, committed=True)  # a replay
    assert gens.place("q2", 1, "c2") == Placement(10, committed=False)


def test_a_query_from_before_generations_keeps_its_ids(tmp_path):
    log(tmp_path, *range(5))
    gens = Generations(tmp_path, "parquet p")
    assert gens.place("old", 4, "c1") == Placement(4, committed=True)  # its own replay
    assert gens.place("old", 5, "c1") == Placement(5, committed=False)


def test_an_older_generation_cannot_write_after_a_newer_one(tmp_path):
    gens = Generations(tmp_path, "parquet p")
    assert gens.place("q1", 0, "c1") == Placement(0, committed=False)
    log(tmp_path, 0, 1)
    assert gens.place("q2", 0, "c2") == Placement(2, committed=False)
    log(tmp_path, 2)
    assert gens.place("q1", 1, "c1") == Placement(1, committed=True)  # replay: skipped
    with pytest.raises(SinkGenerationError, match="checkpoint c1 resumed after a newer run"):
        gens.place("q1", 2, "c1")


def test_an_emptied_folder_starts_afresh(tmp_path):
    gens = Generations(tmp_path, "parquet p")
    gens.place("q1", 0, "c1")
    log(tmp_path, 0, 1, 2)
    gens.place("q2", 0, "c2")
    (tmp_path / "_spark_metadata").rename(tmp_path / "gone")
    assert gens.place("q3", 0, "c3") == Placement(0, committed=False)
    assert [g["query"] for g in gens.load()] == ["q3"]
