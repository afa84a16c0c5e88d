"""Protobuf decode throughput: the workbench's JVM decoder against a Python UDF.

BookingLogMessage records from the generator (``--unique`` distinct ones, repeated up to
``--rows``) sit in a cached DataFrame; each run decodes every row to the same struct
(``workbench.sources.protobuf.decoded_type``) and aggregates over it, so Spark must decode
and convert every record. The Python UDF parses with the generated Python class and builds
the row field by field (``emit_defaults`` semantics: unset scalars as their defaults). Both
are warmed up first; the best of ``--repeat`` runs counts, and a checksum over the decoded
rows must agree between the two.

    .venv/bin/python benchmarks/protobuf_decode.py [--rows 1000000] [--python-rows 1000000]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from datetime import UTC
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from workbench.dev.generator import MESSAGES, Generator
from workbench.schemas.registry import SchemaRegistry, default_registry
from workbench.sources.protobuf import decoded_type, decoder

MESSAGE = MESSAGES["bookings"]
SEED = 42


def records(spark: SparkSession, registry: SchemaRegistry, rows: int, unique: int) -> DataFrame:
    """A cached frame of ``rows`` encoded bookings (``value BINARY``), 4 partitions."""
    distinct = Generator(seed=SEED).encoded("bookings", min(unique, rows), registry)
    values = [(v,) for v in itertools.islice(itertools.cycle(distinct), rows)]
    frame = spark.createDataFrame(values, "value binary").repartition(4).cache()
    frame.count()
    return frame


def python_decoder(registry: SchemaRegistry) -> Callable[[Column], Column]:
    """The way it is done in PySpark without a JVM decoder: a row-at-a-time Python UDF."""
    fields = registry.descriptor(MESSAGE).fields
    names = [f.name for f in fields]
    enums = {f.name: {v.number: v.name for v in f.enum_type.values} for f in fields if f.enum_type}
    made: dict[str, Any] = {}  # the generated class, made once per worker: it does not pickle

    def column(message: Any, name: str) -> Any:
        value = getattr(message, name)
        if name in enums:
            return enums[name].get(value, str(value))
        if name == "items":
            return [(i.id, i.quantity, i.name) for i in value]
        if name == "event_timestamp":
            return value.ToDatetime(tzinfo=UTC) if message.HasField(name) else None
        if name == "metadata":
            return dict(value)
        return value

    @F.udf(decoded_type(registry, MESSAGE))
    def decode(value):  # no type hints: Spark would read them as a pandas UDF's
        if value is None:
            return None, "empty record"
        try:
            if not made:
                made["class"] = default_registry().message_class(MESSAGE)
            message = made["class"].FromString(value)
        except Exception as err:  # a bad record is a result, not a crash
            return None, f"cannot decode {MESSAGE}: {err}"
        return tuple(column(message, name) for name in names), None

    return decode


def checksum(frame: DataFrame, decode: Callable[[Column], Column]) -> tuple[int, float]:
    """(a checksum over every decoded row, seconds taken). The struct is projected once and
    read from there, as a job would: repeating the decode expression in one aggregate can
    evaluate the UDF once per mention."""
    decoded = frame.select(decode(frame["value"]).alias("d"))
    columns = ("order_number", "status", "amount", "event_timestamp", "items")
    fields = [F.col(f"d.message.{name}") for name in columns]
    return timed(decoded.select(F.sum(F.hash(*fields, F.size("d.message.metadata"), "d.error"))))


def timed(frame: DataFrame) -> tuple[int, float]:
    start = time.perf_counter()
    value = frame.first()[0]
    return value, time.perf_counter() - start


def best_of(repeat: int, run: Callable[[], tuple[int, float]]) -> tuple[int, float]:
    runs = [run() for _ in range(repeat)]
    return runs[0][0], min(seconds for _, seconds in runs)


def report(label: str, rows: int, seconds: float) -> float:
    rate = rows / seconds
    print(f"{label:<34}{rows:>11,} rows {seconds:>8.2f} s {rate:>14,.0f} rows/s")
    return rate


def run(spark: SparkSession, args: argparse.Namespace) -> None:
    registry = default_registry()
    jvm, python = decoder(spark, registry, MESSAGE), python_decoder(registry)
    big = records(spark, registry, args.rows, args.unique)
    small = (
        big
        if args.python_rows == args.rows
        else records(spark, registry, args.python_rows, args.unique)
    )
    warm = records(spark, registry, 20_000, 20_000)
    for decode in (jvm, python):  # JIT, Python workers
        checksum(warm, decode)
    base = best_of(args.repeat, lambda: timed(big.select(F.sum(F.length("value")))))
    jvm_run = best_of(args.repeat, lambda: checksum(big, jvm))
    py_run = best_of(args.python_repeat, lambda: checksum(small, python))
    print(
        f"{MESSAGE} ({args.unique:,} distinct records) on {spark.sparkContext.master}, "
        f"Spark {spark.version}, best of {args.repeat} (Python: {args.python_repeat})"
    )
    report("rows only (length, no decoding)", args.rows, base[1])
    jvm_rate = report("JVM decoder (ProtoDecode)", args.rows, jvm_run[1])
    py_rate = report("Python UDF (generated class)", args.python_rows, py_run[1])
    print(f"JVM / Python: {jvm_rate / py_rate:,.1f}x rows/s")
    same = checksum(small, jvm)[0] == py_run[0]
    print(f"JVM and Python checksums agree on the {args.python_rows:,} Python rows: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows for the JVM decoder")
    parser.add_argument("--python-rows", type=int, default=1_000_000, help="rows for Python")
    parser.add_argument("--unique", type=int, default=100_000, help="distinct records")
    parser.add_argument("--repeat", type=int, default=3, help="timed JVM runs; the best counts")
    parser.add_argument("--python-repeat", type=int, default=1, help="timed Python runs")
    parser.add_argument("--master", default="local[2]", help="Spark master")
    args = parser.parse_args()
    from workbench.runtime.spark import session

    spark = session(master=args.master, app_name="protobuf-decode")
    try:
        run(spark, args)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
