"""The Delta sink's life in one process with its own Delta-enabled Spark session (Delta's
SQL extension is set only when a session starts, and the test session's has none):
a job, a replayed batch on restart, compaction with a reader running beside it.

``python delta_scenario.py SPEC.yaml OUT.json``: runs the spec's job to the end of its
topic, forgets its last committed batch (a crash between the sink's write and Spark's
commit) and runs it again, lists its files (``workbench warehouse files``), then
compacts its closed partitions (``workbench warehouse compact``, both in this process)
while a reader thread reads it, and reads it as a quality job's reconciliation does; writes
what each step saw to ``OUT.json``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

WINDOW_MS = 600_000  # a quality job's default window, 10 minutes


def rows(frame) -> list:
    return sorted(
        [
            str(r.tag_s2id),
            r.tag_vehicle_type,
            int(r.window_timestamp.timestamp() * 1000),
            int(r.bookings),
            int(r.unique_customers),
        ]
        for r in frame.collect()
    )


def forget_last_commit(checkpoint: Path) -> int:
    commits = checkpoint / "sinks" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last


def cli(*args: str) -> str:
    """``workbench ARGS`` in this process (its session, which has Delta); its stdout."""
    import contextlib
    import io

    from workbench.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def files(path: str) -> dict[str, int]:
    return {
        p["partition"]: p["files"] for p in json.loads(cli("warehouse", "files", path, "--json"))
    }


def run(spec, spark=None):
    from workbench.streaming.job import StreamingJob

    job = StreamingJob(spec, spark, available_now=True, emit=None)
    job.run(handle_signals=False)
    return job


class Reader(threading.Thread):
    """Reads the whole table again and again until told to stop: (start, end, rows)."""

    def __init__(self, spark, path: str):
        super().__init__(daemon=True)
        self.spark, self.path = spark, path
        self.stop, self.first, self.reads = threading.Event(), threading.Event(), []

    def run(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            seen = rows(self.spark.read.format("delta").load(self.path))
            self.reads.append((began, time.monotonic(), seen))
            self.first.set()


def reconciled(spark, path: str, window_ends: list[int]) -> dict[str, int]:
    """A quality job's warehouse counts of the table ({window start: rows}), 10-minute
    windows over the rows' window ends, as its reconciliation reads them."""
    from workbench.quality.reconcile import warehouse_counts
    from workbench.quality.spec import ReconcileSpec

    spec = ReconcileSpec(path=path, format="delta")
    starts = {(end - 1) // WINDOW_MS * WINDOW_MS for end in window_ends}
    counts = warehouse_counts(spark, spec, [*starts, 0], WINDOW_MS)
    return {str(start): n for start, n in counts.items()}


def main(spec_file: str, out: str) -> None:
    from workbench.runtime.spark import session
    from workbench.spec import load
    from workbench.warehouse.delta import latest_version

    spec = load(Path(spec_file))
    path = spec.sinks[0].path
    clock = [("start", time.monotonic())]
    spark = session(app_name="delta-scenario", conf=spec.session_conf())  # as a job's
    clock.append(("spark start", time.monotonic()))
    first = run(spec, spark)
    clock.append(("first run", time.monotonic()))
    replayed = forget_last_commit(Path(spec.checkpoint))
    second = run(spec, spark)
    clock.append(("second run", time.monotonic()))
    before = files(path)
    version = latest_version(path)
    reader = Reader(spark, path)
    reader.start()
    reader.first.wait(120)  # one full read done: the next ones overlap the compaction
    began = time.monotonic()
    compacted = cli("warehouse", "compact", path, "--older-than", "1h", "--target-size", "128MB")
    ended = time.monotonic()
    reader.stop.set()
    reader.join()
    clock.append(("compaction", time.monotonic()))
    table = rows(spark.read.format("delta").load(path))
    result = {
        "written": [first.totals.rows_written, second.totals.rows_written],
        "skipped": [first.totals.rows_skipped, second.totals.rows_skipped],
        "replayed_batch": replayed,
        "before": before,
        "compact_out": compacted,
        "after": files(path),
        "rows": table,
        "reconciled": reconciled(spark, path, [r[2] for r in table]),
        "rows_at_version": rows(
            spark.read.format("delta").option("versionAsOf", version).load(path)
        ),
        "reads_during": [
            seen for start, end, seen in reader.reads if start < ended and end > began
        ],
        "reads": len(reader.reads),
        "compacting": {
            "after": files(spec.sinks[1].path),
            "rows": rows(spark.read.format("delta").load(spec.sinks[1].path)),
        },
        "seconds": {name: round(t - clock[i][1], 1) for i, (name, t) in enumerate(clock[1:])},
    }
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:])
