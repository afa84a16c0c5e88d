"""How the Parquet sink settles its folder before a batch, over real files: what a crash left
in staging, files of runs from before staging, and the schema file (the SIGKILL and edit
paths through Spark are in ``test_staged_parquet.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.sinks.staging import ORPHANS, SCHEMA_FILE, STAGING, Settled, settle

pytestmark = pytest.mark.unit


def write(path: Path, **columns: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)
    return path


def log(folder: Path, batch: int, *files: str) -> None:
    """The file-sink log's entry of ``batch``, adding ``files`` (relative to ``folder``)."""
    (folder / "_spark_metadata").mkdir(parents=True, exist_ok=True)
    lines = ["v1"] + [
        json.dumps({"path": (folder / f).as_uri(), "size": 1, "action": "add"}) for f in files
    ]
    (folder / "_spark_metadata" / str(batch)).write_text("\n".join(lines) + "\n")


def test_a_crash_after_the_logs_commit_is_published_and_an_uncommitted_batch_dropped(tmp_path):
    folder = tmp_path / "surge"
    write(folder / "dt=2026-12-07/hour=00/part-0-a.parquet", bookings=[1, 2])
    log(folder, 0, "dt=2026-12-07/hour=00/part-0-a.parquet")
    # batch 1 committed in the log, killed before its renames; batch 2 killed mid-write
    write(folder / STAGING / "dt=2026-12-07/hour=01/part-0-b.parquet", bookings=[3])
    log(folder, 1, "dt=2026-12-07/hour=01/part-0-b.parquet")
    write(folder / STAGING / "dt=2026-12-07/hour=01/part-1-c.parquet", bookings=[4, 5])
    assert sorted(pd.read_parquet(folder)["bookings"]) == [1, 2]  # readers never see staging

    assert settle(folder) == Settled(published=1, dropped=1)
    assert sorted(pd.read_parquet(folder)["bookings"]) == [1, 2, 3]
    assert not (folder / STAGING).exists()
    assert settle(folder) == Settled()  # idempotent


def test_files_the_log_does_not_hold_are_set_aside_at_the_first_batch(tmp_path):
    folder = tmp_path / "surge"
    write(folder / "dt=2026-12-07/hour=00/part-0-a.parquet", bookings=[1, 2])
    log(folder, 0, "dt=2026-12-07/hour=00/part-0-a.parquet")
    orphan = write(folder / "dt=2026-12-07/hour=00/part-0-old.parquet", bookings=[1, 2])
    assert len(pd.read_parquet(folder)) == 4  # a killed batch's files before staging: doubled

    assert settle(folder) == Settled()  # later batches do not list the whole folder
    assert settle(folder, orphans=True) == Settled(set_aside=1)
    assert sorted(pd.read_parquet(folder)["bookings"]) == [1, 2]
    assert (folder / ORPHANS / orphan.relative_to(folder)).exists()


def test_the_schema_file_carries_a_column_an_edit_added_and_keeps_it(tmp_path):
    folder = tmp_path / "surge"
    write(folder / "dt=2026-12-07/hour=00/part-0-a.parquet", bookings=[1])
    log(folder, 0, "dt=2026-12-07/hour=00/part-0-a.parquet")
    settle(folder)
    write(folder / "dt=2026-12-07/hour=01/part-0-b.parquet", bookings=[2], lat=[-6.2])
    log(folder, 1, "dt=2026-12-07/hour=01/part-0-b.parquet")
    log(folder, 2)  # a batch that wrote no file
    settle(folder)

    frame = pd.read_parquet(folder).sort_values("bookings")
    assert list(frame["lat"].isna()) == [True, False]
    assert pq.read_table(folder).schema.names[:2] == ["bookings", "lat"]
    assert pq.read_table(folder / SCHEMA_FILE).num_rows == 0
