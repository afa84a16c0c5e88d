"""Reconciliation with a dagger's Parquet sink: the windows it holds match Kafka, and an hour
partition the test deletes after the windows were emitted is found when the next run
re-checks them (its windows' records missing from the warehouse)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

from planted import T0, T0_MS, WINDOW_MS, Planter
from streaming import new_topic, surge_spec

from workbench.quality import metrics
from workbench.quality.job import QualityJob
from workbench.quality.spec import parse
from workbench.streaming.job import StreamingJob

COUNT_SQL = """
SELECT COUNT(*) AS bookings, TUMBLE_END(rowtime, INTERVAL '60' SECOND) AS window_timestamp
FROM booking
GROUP BY TUMBLE(rowtime, INTERVAL '60' SECOND)
"""


def test_a_warehouse_partition_deleted_later_is_found(spark, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "quality-rec", partitions=2)
    last = (60 - T0.minute) // 10  # window `last` starts an hour; `last - 1` ends the one before
    planter = Planter(bootstrap, topic)
    planter.bookings(0, 120, window=last - 1)
    planter.bookings(200, 120, window=last)
    planter.bookings(900, 1, window=last + 3)  # moves the dagger's watermark past both
    planter.flush()
    warehouse = tmp_path / "warehouse"
    dagger = surge_spec(
        bootstrap,
        topic,
        tmp_path / "dagger",
        [{"type": "parquet", "path": str(warehouse)}],
        sql=COUNT_SQL,
        name="booking-counts",
    )
    StreamingJob(dagger, spark, available_now=True, emit=None).run()

    spec = parse(
        {
            "kind": "quality",
            "name": "bookings-reconciled",
            "streams": [
                {
                    "topics": [topic],
                    "message": "esb.booking.BookingLogMessage",
                    "bootstrap_servers": bootstrap,
                }
            ],
            "sinks": [{"type": "parquet", "path": str(tmp_path / "metrics")}],
            "checkpoint": str(tmp_path / "checkpoint"),
            "reconcile": {"path": str(warehouse), "count_column": "bookings"},
        }
    )
    QualityJob(spec, spark, available_now=True, emit=None).run()
    assert found(spark, tmp_path)[last - 1 : last + 1] == [(120, 120, 0), (120, 120, 0)]

    hour = datetime.fromtimestamp((T0_MS + last * WINDOW_MS) / 1000, UTC)
    deleted = warehouse / f"dt={hour:%Y-%m-%d}" / f"hour={hour:%H}"
    assert deleted.is_dir()
    shutil.rmtree(deleted)  # after its windows were emitted
    planter.bookings(2000, 1, window=last + 4)  # the topic goes on
    planter.flush()
    QualityJob(spec, spark, available_now=True, emit=None).run()  # re-checks at its start
    assert found(spark, tmp_path)[last - 1 : last + 1] == [
        (120, 120, 0),  # kept: equal to Kafka
        (120, 0, 120),  # the deleted partition's records, all missing
    ]


def found(spark, tmp_path) -> list[tuple[int, int, int]]:
    """(unique, warehouse, warehouse_missing) of each window from T0, by window."""
    rows = metrics.latest(spark.read.parquet(str(tmp_path / "metrics"))).collect()
    by_window = {
        (int(r.window_timestamp.timestamp() * 1000) - T0_MS) // WINDOW_MS: (
            r.unique,
            r.warehouse,
            r.warehouse_missing,
        )
        for r in rows
    }
    return [by_window.get(w, (0, 0, 0)) for w in range(max(by_window) + 1)]
