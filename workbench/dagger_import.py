"""Import a Dagger job's ``.properties`` file as a dagger spec, so teams can migrate.

Dagger names messages by Java class and the event time by proto field *number*;
both are resolved against the schema registry.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from workbench.exceptions import SpecError
from workbench.schemas import SchemaRegistry, default_registry
from workbench.spec import DaggerSpec, parse

_CONSUMER = "SOURCE_KAFKA_CONSUMER_CONFIG_"
#: consumer settings Spark's Kafka source manages itself
_MANAGED = {
    "BOOTSTRAP_SERVERS",
    "GROUP_ID",
    "AUTO_OFFSET_RESET",
    "AUTO_COMMIT_ENABLE",
    "ENABLE_AUTO_COMMIT",
}


def read_properties(path: str | Path) -> dict[str, str]:
    from jproperties import Properties

    props = Properties()
    with open(path, "rb") as handle:
        props.load(handle, "utf-8")
    return {key: value.data for key, value in props.items()}


def import_properties(
    path: str | Path, name: str | None = None, registry: SchemaRegistry | None = None
) -> DaggerSpec:
    path = Path(path)
    if not path.exists():
        raise SpecError("(file)", f"no such file '{path}'", str(path))
    props = read_properties(path)
    registry = registry or default_registry()
    data = {
        "name": _slug(name or props.get("FLINK_JOB_ID") or path.stem),
        "description": f"Imported from {path.name}",
        "streams": [_stream(i, s, registry) for i, s in enumerate(_streams(props, path))],
        "sql": _required(props, "FLINK_SQL_QUERY", path, fallback="SQL_QUERY"),
        "rowtime_attribute": props.get("FLINK_ROWTIME_ATTRIBUTE_NAME") or "rowtime",
        "watermark_delay": int(props.get("FLINK_WATERMARK_DELAY_MS", "10000")),
        "trigger_interval": int(props.get("FLINK_WATERMARK_INTERVAL_MS", "10000")),
        "sinks": [_sink(props, registry, path)],
    }
    return parse(data, str(path))


def _required(props: dict[str, str], key: str, path: Path, fallback: str = "") -> str:
    value = props.get(key) or (props.get(fallback) if fallback else None)
    if not value:
        raise SpecError(key, "required in a Dagger properties file", str(path))
    return value


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")
    return slug if slug[:1].isalpha() else f"dagger-{slug}"


def _streams(props: dict[str, str], path: Path) -> list[dict[str, Any]]:
    raw = _required(props, "STREAMS", path)
    try:
        streams = json.loads(raw)
    except json.JSONDecodeError as err:
        raise SpecError("STREAMS", f"not valid JSON: {err}", str(path)) from None
    if not isinstance(streams, list) or not streams:
        raise SpecError("STREAMS", "expected a JSON array of stream objects", str(path))
    return streams


def _stream(index: int, raw: dict[str, Any], registry: SchemaRegistry) -> dict[str, Any]:
    def get(key: str, default: str | None = None) -> str | None:
        return raw.get(key, default)

    key = f"STREAMS[{index}]"
    proto_class = get("INPUT_SCHEMA_PROTO_CLASS")
    if not proto_class:
        raise SpecError(f"{key}.INPUT_SCHEMA_PROTO_CLASS", "required")
    try:
        message = registry.resolve(proto_class)
        field_number = int(get("INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX") or -1)
        event_field = registry.field_by_number(message, field_number).name
    except Exception as err:
        raise SpecError(key, f"{err} Add the job's .proto files with $WORKBENCH_SCHEMAS.") from None
    options = {
        f"kafka.{k[len(_CONSUMER) :].lower().replace('_', '.')}": str(v)
        for k, v in raw.items()
        if k.startswith(_CONSUMER) and k[len(_CONSUMER) :] not in _MANAGED
    }
    stream = {
        "table": get("INPUT_SCHEMA_TABLE"),
        "message": message,
        "cluster": get("SOURCE_KAFKA_NAME", "default"),
        "bootstrap_servers": get(f"{_CONSUMER}BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        "topic_pattern": get("SOURCE_KAFKA_TOPIC_NAMES"),
        "event_timestamp_field": event_field,
        "group_id": get(f"{_CONSUMER}GROUP_ID"),
        "starting_offsets": (get(f"{_CONSUMER}AUTO_OFFSET_RESET") or "latest").lower(),
        "kafka_options": options,
    }
    return {k: v for k, v in stream.items() if v not in (None, {}, "")}


def _sink(props: dict[str, str], registry: SchemaRegistry, path: Path) -> dict[str, Any]:
    kind = (props.get("SINK_TYPE") or "influx").lower()
    if kind == "influx":
        return _drop_empty(
            {
                "type": "influx",
                "api": 1,
                "url": props.get("SINK_INFLUX_URL"),
                "username": props.get("SINK_INFLUX_USERNAME"),
                "password": props.get("SINK_INFLUX_PASSWORD"),
                "database": props.get("SINK_INFLUX_DB_NAME"),
                "measurement": props.get("SINK_INFLUX_MEASUREMENT_NAME"),
                "retention_policy": props.get("SINK_INFLUX_RETENTION_POLICY"),
                "batch_size": _int(props.get("SINK_INFLUX_BATCH_SIZE")),
                "flush_interval_ms": _int(props.get("SINK_INFLUX_FLUSH_DURATION_MS")),
            }
        )
    if kind == "kafka":
        return _kafka_sink(props, registry)
    if kind == "log":
        return {"type": "log"}
    raise SpecError("SINK_TYPE", f"'{kind}' is not supported; use influx, kafka or log", str(path))


def _kafka_sink(props: dict[str, str], registry: SchemaRegistry) -> dict[str, Any]:
    proto = (props.get("SINK_KAFKA_DATA_TYPE") or "PROTO").upper() == "PROTO"
    key_class = props.get("SINK_KAFKA_PROTO_KEY")
    keys = [f.name for f in registry.descriptor(key_class).fields] if key_class else []
    message = props.get("SINK_KAFKA_PROTO_MESSAGE")
    return _drop_empty(
        {
            "type": "kafka",
            "bootstrap_servers": props.get("SINK_KAFKA_BROKERS"),
            "topic": props.get("SINK_KAFKA_TOPIC"),
            "format": "proto" if proto else "json",
            "message": registry.resolve(message) if proto and message else None,
            "key_columns": keys,
            "kafka_options": _drop_empty({"kafka.linger.ms": props.get("SINK_KAFKA_LINGER_MS")}),
        }
    )


def _int(value: str | None) -> int | None:
    return int(value) if value and value.strip() and int(value) > 0 else None


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in (None, "", [], {})}
