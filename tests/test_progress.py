"""The progress listener on a real streaming query: each batch reported with its figures,
read from the progress's JSON without a Java exception (PySpark's own conversion throws
one per Java map it reads, each converted at a cost on the listener's thread)."""

from __future__ import annotations

import threading

from polling import wait_for
from pyspark.errors.exceptions import captured
from pyspark.sql import functions

from workbench.streaming.progress import ProgressListener, Totals


def test_each_batch_is_reported_without_a_java_exception(spark, monkeypatch):
    converted: list[str] = []
    convert = captured.convert_exception

    def counted(error):
        if threading.current_thread() is not threading.main_thread():
            converted.append(str(error.toString()))
        return convert(error)

    monkeypatch.setattr(captured, "convert_exception", counted)
    reports = []
    totals = Totals()
    listener = ProgressListener("progress-json", totals, emit=None, on_batch=reports.append)
    spark.streams.addListener(listener)
    rows = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 50)
        .load()
        .withWatermark("timestamp", "1 second")
        .groupBy("timestamp")  # a state operator: its custom metrics are a Java map
        .count()
        .observe("result", functions.count(functions.lit(1)).alias("rows"))
    )
    query = (
        rows.writeStream.queryName("progress-json")
        .outputMode("append")
        .format("noop")
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        wait_for(lambda: sum(r.input_rows for r in reports) > 0, 60, "a batch with rows")
    finally:
        query.stop()
        spark.streams.removeListener(listener)
    assert totals.batches == len(reports) >= 1
    assert totals.input_rows == sum(r.input_rows for r in reports) > 0
    assert all(r.query == "progress-json" and r.duration_ms > 0 for r in reports)  # a map
    assert converted == []
