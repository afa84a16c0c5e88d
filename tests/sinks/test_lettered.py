"""The job's letter index over real dead-letter folders: runs of new checkpoints (an edit, a
rollback, a failover) that read records again write each record's letter once, per job.
(The edit path through Spark and Kafka is in ``test_generations.py``.)"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from workbench.sinks.dead_parquet import ParquetLetters
from workbench.sinks.registry import SinkContext
from workbench.streaming.deadletters import Letters

pytestmark = pytest.mark.unit

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def letter(offset: int, partition: int = 0, stamp: datetime | None = None) -> dict:
    return {
        "table": "booking",
        "topic": "bookings",
        "partition": partition,
        "offset": offset,
        "kafka_timestamp": stamp or T0 + timedelta(seconds=offset),
        "key": None,
        "value": f"bad {offset}".encode(),
        "error": "esb.booking.BookingLogMessage: truncated",
    }


def run(folder: Path, tmp: Path, job: str = "surge") -> ParquetLetters:
    """A dead-letter writer of a new checkpoint of ``job`` (a new query id), as a run opens it."""
    checkpoint = tmp / f"checkpoint-{uuid.uuid4().hex[:6]}"
    (checkpoint / "sinks").mkdir(parents=True)
    (checkpoint / "sinks" / "metadata").write_text(json.dumps({"id": str(uuid.uuid4())}))
    ctx = SinkContext(None, job, checkpoint, None, "append", {})  # type: ignore[arg-type]
    return ParquetLetters(folder, ctx)


def places(folder: Path, *extra: str) -> Counter:
    """Each (topic, partition, offset, *extra) the folder holds, as pyarrow reads it, with
    its count."""
    table = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    columns = ("topic", "partition", "offset", *extra)
    return Counter(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def test_an_edit_a_rollback_and_a_failover_letter_each_record_once(tmp_path):
    folder = tmp_path / "dead-letters"
    v1 = run(folder, tmp_path)
    assert v1.write(Letters([letter(o) for o in range(0, 6)]), 0) == 6
    assert v1.write(Letters([letter(8552), letter(9000, partition=1)]), 3) == 2

    # v2, an edit on a new checkpoint: its handoff reads offsets 3.. again
    v2 = run(folder, tmp_path)
    assert v2.write(Letters([letter(o) for o in range(3, 10)]), 0) == 4  # 6..9 are new
    assert v2.write(Letters([letter(8552), letter(8553)]), 1) == 1
    # ... and a replay of its batch 1 (a crash before Spark's commit) rewrites its folder
    assert v2.write(Letters([letter(8552), letter(8553)]), 1) == 1

    # v3, a rollback to v1's SQL, and v4, a failover to a mirror: both read everything again.
    # On the mirror, partition 1 drifted: its offset 9000 is another record (another time)
    v3 = run(folder, tmp_path)
    assert v3.write(Letters([letter(o) for o in range(0, 10)] + [letter(8552)]), 0) == 0
    v4 = run(folder, tmp_path)
    other = letter(9000, partition=1, stamp=T0 - timedelta(days=1))
    assert v4.write(Letters([letter(8552), letter(8553), other]), 0) == 1

    held = places(folder)
    assert [p for p, n in held.items() if n > 1] == [("bookings", 1, 9000)]  # two records
    records = places(folder, "kafka_timestamp")
    assert set(records.values()) == {1}
    assert len(records) == 6 + 2 + 4 + 1 + 1  # every record lettered, once
    assert not list((folder / f"run={v3.ctx.query_id}").glob("batch=*"))


def test_jobs_sharing_a_folder_keep_their_own_letters(tmp_path):
    folder = tmp_path / "shared"
    assert run(folder, tmp_path, "surge").write(Letters([letter(1), letter(2)]), 0) == 2
    assert run(folder, tmp_path, "fraud").write(Letters([letter(1), letter(2)]), 0) == 2
    assert run(folder, tmp_path, "surge").write(Letters([letter(1), letter(3)]), 0) == 1
    assert run(folder, tmp_path, "fraud").write(Letters([letter(2), letter(3)]), 0) == 1
    assert places(folder) == Counter({("bookings", 0, 1): 2, ("bookings", 0, 2): 2,
                                      ("bookings", 0, 3): 2})  # fmt: skip
