"""What ``import-dagger`` does with each key of a Dagger ``.properties`` file it does not map.

Every key is either carried into the spec (:mod:`workbench.dagger_import.convert`) or named here
as *not carried over*, with why. A key is *unsupported* when leaving it out changes what
the job emits (processors, Longbow, Python UDFs, unknown keys): the import fails on those
unless told to ignore them. The rest are settings Spark has its own way for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from workbench.exceptions import clip


@dataclass(frozen=True)
class Dropped:
    """A key not carried into the spec; ``unsupported`` when the job's output changes."""

    key: str
    reason: str
    unsupported: bool = True

    def render(self) -> str:
        return f"{self.key}: {self.reason}"


#: (pattern, reason): keys Spark handles its own way; leaving them out changes no row
NOT_NEEDED: list[tuple[str, str]] = [
    (r"METRIC_TELEMETRY_.*", "Dagger telemetry; `workbench run` prints per-batch progress"),
    (r"FLINK_PARALLELISM(_MAX)?", "Spark sets parallelism (spark_conf, WORKBENCH_SPARK_MASTER)"),
    (r"FLINK_CHECKPOINT_.*", "Spark checkpoints every micro-batch (spec key `checkpoint`)"),
    (r"FLINK_WATERMARK_PER_PARTITION_ENABLE", "Spark's watermark is per query (README)"),
    (r"SCHEMA_REGISTRY_STENCIL_.*", "give the descriptor sets with the spec key `schemas`"),
    (r"SINK_KAFKA_PRODUCE_LARGE_MESSAGE_ENABLE", "set kafka.max.request.size in kafka_options"),
    (r"(SINK_KAFKA_STREAM|SINK_KAFKA_JSON_SCHEMA)", "not needed by the Kafka sink"),
    (r"UDF_DART_.*", "Dart (GCS) UDF data is not read; the UDFs using it are not available"),
    (r"PYTHON_UDF_CONFIG", "Python UDFs are off (PYTHON_UDF_ENABLE)"),
    (r"PROCESSOR_(PRE|POST)PROCESSOR_(ENABLE|CONFIG)", "processors are off"),
    (
        r"SOURCE_KAFKA_CONSUMER_CONFIG_(AUTO_COMMIT_ENABLE|ENABLE_AUTO_COMMIT)",
        "Spark tracks Kafka offsets in the checkpoint",
    ),
    (r"SOURCE_DETAILS", "an unbounded Kafka source is what `run` reads"),
]

#: (pattern, reason): keys whose feature the workbench does not have
UNSUPPORTED: list[tuple[str, str]] = [
    (r"PROCESSOR_LONGBOW_.*", "Longbow (Bigtable history) is not supported"),
    (r"FUNCTION_FACTORY_CLASSES", "only the built-in Dagger UDFs exist (`workbench udfs`)"),
    (r"PYTHON_UDF_ENABLE", "Python UDFs are not supported"),
    (r"INPUT_DATATYPE", "only protobuf input is supported"),
    (r"SOURCE_PARQUET_.*", "Parquet sources are not supported; use `workbench replay`"),
]


def _factories(key: str, value: str) -> Dropped | None:
    # Dagger's own default is the bare class name "FunctionFactory" (Constants.
    # FUNCTION_FACTORY_CLASSES_DEFAULT); its docs give the full name
    builtin = r"([\w.]*dagger\.functions\.udfs\.factories\.)?FunctionFactory"
    if all(re.fullmatch(builtin, c.strip()) for c in value.split(",") if c.strip()):
        return Dropped(key, "the built-in Dagger UDFs are always there", unsupported=False)
    return None


def _python_udfs(key: str, value: str) -> Dropped | None:
    if value.strip().lower() != "true":
        return Dropped(key, "Python UDFs are off", unsupported=False)
    return None


def _source_details(key: str, value: str) -> Dropped | None:
    kafka = {"KAFKA_CONSUMER", "KAFKA_SOURCE"}
    try:
        details = json.loads(value) if isinstance(value, str) else value
        ok = all(
            d.get("SOURCE_TYPE") == "UNBOUNDED" and d.get("SOURCE_NAME") in kafka for d in details
        )
    except (ValueError, TypeError, AttributeError):
        ok = False
    if ok:
        return None
    return Dropped(key, f"only unbounded Kafka sources are supported, got {clip(value)}")


#: keys whose value decides: a checker returns a Dropped, or None to use the tables above
BY_VALUE = {
    "FUNCTION_FACTORY_CLASSES": _factories,
    "PYTHON_UDF_ENABLE": _python_udfs,
    "SOURCE_DETAILS": _source_details,
}


def explain(key: str, value: str) -> Dropped:
    """Why ``key`` (with ``value``) is not carried over."""
    name = key.rsplit(".", 1)[-1]
    checker = BY_VALUE.get(name)
    found = checker(key, value) if checker else None
    if found is not None:
        return found
    for pattern, reason in UNSUPPORTED:
        if re.fullmatch(pattern, name):
            return Dropped(key, reason)
    for pattern, reason in NOT_NEEDED:
        if re.fullmatch(pattern, name):
            return Dropped(key, reason, unsupported=False)
    return Dropped(key, "not known to the importer; its effect would be lost")
