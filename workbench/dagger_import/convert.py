"""Import a Dagger job's ``.properties`` file as a dagger spec, so teams can migrate.

Dagger names messages by Java class and the event time by proto field *number*;
both are resolved against the schema registry. Every key that is not carried into the
spec is named (:mod:`workbench.dagger_import.keys`); :func:`import_properties` fails on those
whose loss changes the job's output unless ``ignore_unsupported`` is set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.dagger_import import processors as dagger_processors
from workbench.dagger_import.keys import Dropped, explain
from workbench.exceptions import (
    InputFileError,
    SchemaError,
    SpecError,
    UnknownNameError,
    UnsupportedDaggerError,
    clip,
)
from workbench.schemas import SchemaRegistry, default_registry
from workbench.spec import DaggerSpec, parse
from workbench.sql.parse import parse as parse_sql
from workbench.streams import time_field_problem
from workbench.userfiles import read_text

_CONSUMER = "SOURCE_KAFKA_CONSUMER_CONFIG_"
#: consumer settings carried into stream keys, and those Spark manages itself; the rest
#: go to kafka_options
_STREAM_KEYS = {"BOOTSTRAP_SERVERS", "GROUP_ID", "AUTO_OFFSET_RESET"}
_MANAGED = {"AUTO_COMMIT_ENABLE", "ENABLE_AUTO_COMMIT"}
_STREAM_CARRIED = {
    "INPUT_SCHEMA_PROTO_CLASS",
    "INPUT_SCHEMA_TABLE",
    "INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX",
    "SOURCE_KAFKA_NAME",
    "SOURCE_KAFKA_TOPIC_NAMES",
}
_CARRIED = {
    "FLINK_SQL_QUERY",
    "SQL_QUERY",
    "STREAMS",
    "FLINK_ROWTIME_ATTRIBUTE_NAME",
    "FLINK_WATERMARK_DELAY_MS",
    "FLINK_WATERMARK_INTERVAL_MS",
    "FLINK_JOB_ID",
    "SINK_TYPE",
    "PROCESSOR_POSTPROCESSOR_ENABLE",
    "PROCESSOR_PREPROCESSOR_ENABLE",
}
_INFLUX_KEYS = {
    "url": "SINK_INFLUX_URL",
    "username": "SINK_INFLUX_USERNAME",
    "password": "SINK_INFLUX_PASSWORD",
    "database": "SINK_INFLUX_DB_NAME",
    "measurement": "SINK_INFLUX_MEASUREMENT_NAME",
    "retention_policy": "SINK_INFLUX_RETENTION_POLICY",
}
_KAFKA_KEYS = {
    "SINK_KAFKA_BROKERS",
    "SINK_KAFKA_TOPIC",
    "SINK_KAFKA_DATA_TYPE",
    "SINK_KAFKA_PROTO_KEY",
    "SINK_KAFKA_PROTO_MESSAGE",
    "SINK_KAFKA_LINGER_MS",
}


@dataclass
class Imported:
    """A spec and every key of the properties file it does not carry."""

    spec: DaggerSpec
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def unsupported(self) -> list[Dropped]:
        return [d for d in self.dropped if d.unsupported]


def read_properties(path: str | Path) -> dict[str, str]:
    from jproperties import Properties, PropertyError

    try:
        text = read_text(path, "Dagger .properties")
    except InputFileError as err:
        raise SpecError("(file)", str(err).partition(": ")[2], str(path)) from None
    props = Properties()
    try:
        props.load(text)
    except PropertyError as err:
        raise SpecError("(file)", f"not a .properties file: {clip(err)}", str(path)) from None
    return {key: value.data for key, value in props.items()}


def import_properties(
    path: str | Path,
    name: str | None = None,
    registry: SchemaRegistry | None = None,
    ignore_unsupported: bool = False,
) -> DaggerSpec:
    """The spec for the job at ``path``; :class:`UnsupportedDaggerError` when a key whose
    loss changes the output cannot be carried, unless ``ignore_unsupported``."""
    result = import_job(path, name, registry)
    if result.unsupported and not ignore_unsupported:
        raise UnsupportedDaggerError(str(path), result.dropped)
    return result.spec


def import_job(
    path: str | Path, name: str | None = None, registry: SchemaRegistry | None = None
) -> Imported:
    """The spec for the job at ``path`` and every key it leaves out (see :class:`Imported`)."""
    path = Path(path)
    props = read_properties(path)
    registry = registry or default_registry()
    post, dropped = dagger_processors.postprocessor(props)
    dropped += dagger_processors.preprocessor(props)
    raw_streams = _streams(props, path)
    sink, sink_keys = _sink(props, registry, path)
    sql = _required(props, "FLINK_SQL_QUERY", path, fallback="SQL_QUERY")
    data = {
        "name": _slug(name or props.get("FLINK_JOB_ID") or path.stem),
        "description": f"Imported from {path.name}",
        "streams": [_stream(i, s, registry, path) for i, s in enumerate(raw_streams)],
        "sql": sql,
        "rowtime_attribute": props.get("FLINK_ROWTIME_ATTRIBUTE_NAME") or "rowtime",
        "watermark_delay": _millis(props, "FLINK_WATERMARK_DELAY_MS", 10000, path),
        "trigger_interval": _millis(props, "FLINK_WATERMARK_INTERVAL_MS", 10000, path),
        "sinks": [sink],
        **post,
    }
    dropped += _dedup_event_time(data)
    if re.search(r"\blongbow_", sql, re.IGNORECASE):
        dropped.append(Dropped("FLINK_SQL_QUERY", "Longbow (longbow_* columns) is not supported"))
    carried = _CARRIED | sink_keys | ({dagger_processors.POST} if post else set())
    dropped += [
        explain(k, v)
        for k, v in props.items()
        if k not in carried and not _handled_processor(props, k)
    ]
    dropped += [d for i, s in enumerate(raw_streams) for d in _stream_dropped(i, s)]
    return Imported(parse(data, str(path)), dropped)


def _dedup_event_time(data: dict[str, Any]) -> list[Dropped]:
    """Make ``deduplicate`` runnable: it needs the event time among the SQL's output
    columns, where Dagger's transformer did not. A plain SELECT over one stream that
    leaves it out gets it added, and ``deduplicate.columns`` keeps the job's output what
    Dagger wrote; any other query loses its ``deduplicate`` (unsupported: rows change)."""
    dedup = data.get("deduplicate")
    if dedup is None:
        return []
    rowtime, key = data["rowtime_attribute"], f"{dagger_processors.POST}.transformers"
    try:
        outputs = _dedup_outputs(data["sql"], rowtime)
    except _NoEventTime as err:
        del data["deduplicate"]
        return [Dropped(key, f"deduplicate needs the event time among the output columns: {err}")]
    if outputs is None:  # the event time is selected (or ``*``)
        return []
    dedup.setdefault("columns", outputs)
    data["sql"] = re.sub(r"^(\s*SELECT\s+)", rf"\g<1>{rowtime}, ", data["sql"], count=1,
                         flags=re.IGNORECASE)  # fmt: skip
    return [
        Dropped(
            "FLINK_SQL_QUERY",
            f"'{rowtime}' added to the SELECT list for deduplicate (not written: "
            "deduplicate.columns)",
            unsupported=False,
        )
    ]


class _NoEventTime(Exception):
    pass


def _dedup_outputs(sql: str, rowtime: str) -> list[str] | None:
    """The output columns of ``sql``, when ``rowtime`` can be added to its SELECT list
    (a plain SELECT of one stream: no GROUP BY, DISTINCT, join or aggregate); None when
    it already selects it; :class:`_NoEventTime` saying why it cannot be added."""
    from sqlglot import exp

    tree = parse_sql(sql)
    if not isinstance(tree, exp.Select):
        raise _NoEventTime("the SQL is not a plain SELECT; add it yourself")
    names = [e.alias_or_name for e in tree.expressions]
    if rowtime in names or any(isinstance(e, exp.Star) for e in tree.expressions):
        return None
    grouped = any(tree.args.get(k) for k in ("group", "distinct", "joins"))
    plain = not grouped and all(names) and not tree.find(exp.AggFunc)
    if not plain or not re.match(r"\s*SELECT\s", sql, re.IGNORECASE):
        raise _NoEventTime(
            f"'{rowtime}' cannot be added to this SELECT (GROUP BY, DISTINCT, a join, an "
            "aggregate or an unnamed column); select the window's time or the event time yourself"
        )
    return names


def _handled_processor(props: dict[str, str], key: str) -> bool:
    """A processor's config, read by :mod:`workbench.dagger_import.processors` when enabled."""
    for kind in ("PRE", "POST"):
        if key == f"PROCESSOR_{kind}PROCESSOR_CONFIG":
            return dagger_processors.enabled(props, kind)
    return False


def _required(props: dict[str, str], key: str, path: Path, fallback: str = "") -> str:
    value = props.get(key) or (props.get(fallback) if fallback else None)
    if not value:
        raise SpecError(key, "required in a Dagger properties file", str(path))
    return value


def _millis(props: dict[str, str], key: str, default: int, path: Path) -> int:
    raw = props.get(key, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise SpecError(key, f"expected whole milliseconds, got '{clip(raw)}'", str(path))
    return int(raw)


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:90]
    return slug if slug[:1].isalpha() else f"dagger-{slug}"


def _streams(props: dict[str, str], path: Path) -> list[dict[str, Any]]:
    raw = _required(props, "STREAMS", path)
    try:
        streams = json.loads(raw)
    except json.JSONDecodeError as err:
        raise SpecError(
            "STREAMS", f"not valid JSON: {err.msg} at column {err.colno}", str(path)
        ) from None
    if not isinstance(streams, list) or not streams:
        raise SpecError("STREAMS", "expected a JSON array of stream objects", str(path))
    for i, stream in enumerate(streams):
        if not isinstance(stream, dict):
            raise SpecError(
                f"STREAMS[{i}]",
                f'expected an object such as {{"INPUT_SCHEMA_TABLE": ...}}, got '
                f"{clip(json.dumps(stream))}",
                str(path),
            )
    return streams


def _stream(index: int, raw: dict[str, Any], registry: SchemaRegistry, path: Path) -> dict:
    def get(key: str, default: str | None = None) -> str | None:
        value = raw.get(key, default)
        return None if value is None else str(value)

    key = f"STREAMS[{index}]"
    proto_class = get("INPUT_SCHEMA_PROTO_CLASS")
    if not proto_class:
        raise SpecError(f"{key}.INPUT_SCHEMA_PROTO_CLASS", "required", str(path))
    number = (get("INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX") or "").strip()
    if not number.isdigit():
        raise SpecError(
            f"{key}.INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX",
            f"expected the event time's field number, got '{clip(number)}'",
            str(path),
        )
    try:
        message = registry.resolve(proto_class)
        event_field = registry.field_by_number(message, int(number))
    except (UnknownNameError, SchemaError) as err:
        raise SpecError(
            key, f"{err} Add the job's .proto files with $WORKBENCH_SCHEMAS.", str(path)
        ) from None
    problem = time_field_problem(event_field)
    if problem:
        raise SpecError(f"{key}.INPUT_SCHEMA_EVENT_TIMESTAMP_FIELD_INDEX", problem, str(path))
    options = {
        f"kafka.{k[len(_CONSUMER) :].lower().replace('_', '.')}": str(v)
        for k, v in raw.items()
        if k.startswith(_CONSUMER) and k[len(_CONSUMER) :] not in _STREAM_KEYS | _MANAGED
    }
    stream = {
        "table": get("INPUT_SCHEMA_TABLE"),
        "message": message,
        "cluster": get("SOURCE_KAFKA_NAME", "default"),
        "bootstrap_servers": get(f"{_CONSUMER}BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        "topic_pattern": get("SOURCE_KAFKA_TOPIC_NAMES"),
        "event_timestamp_field": event_field.name,
        "group_id": get(f"{_CONSUMER}GROUP_ID"),
        "starting_offsets": (get(f"{_CONSUMER}AUTO_OFFSET_RESET") or "latest").lower(),
        "kafka_options": options,
    }
    return {k: v for k, v in stream.items() if v not in (None, {}, "")}


def _stream_dropped(index: int, raw: dict[str, Any]) -> list[Dropped]:
    """A stream's keys that are neither stream keys nor Kafka consumer options."""
    return [
        explain(f"STREAMS[{index}].{k}", v if isinstance(v, str) else json.dumps(v))
        for k, v in raw.items()
        if k not in _STREAM_CARRIED
        and not (k.startswith(_CONSUMER) and k[len(_CONSUMER) :] not in _MANAGED)
    ]


def _sink(props: dict[str, str], registry: SchemaRegistry, path: Path) -> tuple[dict, set[str]]:
    kind = (props.get("SINK_TYPE") or "influx").lower()
    make = _SINKS.get(kind)
    if make is None:
        raise SpecError(
            "SINK_TYPE",
            f"'{clip(kind)}' is not supported; use {', '.join(_SINKS)}",
            str(path),
        )
    return make(props, registry, path)


def _influx_sink(props: dict[str, str], registry: SchemaRegistry, path: Path) -> tuple:
    sink: dict[str, Any] = {k: props.get(p) for k, p in _INFLUX_KEYS.items()}
    sink |= {
        "type": "influx",
        "api": 1,
        "batch_size": _positive(props, "SINK_INFLUX_BATCH_SIZE", path),
        "flush_interval_ms": _positive(props, "SINK_INFLUX_FLUSH_DURATION_MS", path),
    }
    keys = {*_INFLUX_KEYS.values(), "SINK_INFLUX_BATCH_SIZE", "SINK_INFLUX_FLUSH_DURATION_MS"}
    return _drop_empty(sink), keys


def _kafka_sink(props: dict[str, str], registry: SchemaRegistry, path: Path) -> tuple:
    proto = (props.get("SINK_KAFKA_DATA_TYPE") or "PROTO").upper() == "PROTO"
    key_class = props.get("SINK_KAFKA_PROTO_KEY")
    message = props.get("SINK_KAFKA_PROTO_MESSAGE")
    try:
        keys = [f.name for f in registry.descriptor(key_class).fields] if key_class else []
        resolved = registry.resolve(message) if proto and message else None
    except (UnknownNameError, SchemaError) as err:
        raise SpecError("SINK_KAFKA_PROTO_*", str(err), str(path)) from None
    sink = {
        "type": "kafka",
        "bootstrap_servers": props.get("SINK_KAFKA_BROKERS"),
        "topic": props.get("SINK_KAFKA_TOPIC"),
        "format": "proto" if proto else "json",
        "message": resolved,
        "key_columns": keys,
        "kafka_options": _drop_empty({"kafka.linger.ms": props.get("SINK_KAFKA_LINGER_MS")}),
    }
    return _drop_empty(sink), _KAFKA_KEYS


def _log_sink(props: dict[str, str], registry: SchemaRegistry, path: Path) -> tuple:
    return {"type": "log"}, set()


#: SINK_TYPE → the sink entry and the properties keys it carried
_SINKS = {"influx": _influx_sink, "kafka": _kafka_sink, "log": _log_sink}


def _positive(props: dict[str, str], key: str, path: Path) -> int | None:
    raw = (props.get(key) or "").strip()
    if not raw:
        return None
    if not raw.lstrip("-").isdigit():
        raise SpecError(key, f"expected a whole number, got '{clip(raw)}'", str(path))
    return int(raw) if int(raw) > 0 else None


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in (None, "", [], {})}
