"""Dagger's pre- and post-processors, as far as a spec can express them.

``PROCESSOR_POSTPROCESSOR_CONFIG`` holds ``internal_source`` (columns re-selected from the
SQL's output), ``external_source`` (Elasticsearch, HTTP, Postgres, gRPC enrichment) and
``transformers``. Of these the spec carries the ``DeDuplicationTransformer`` (as
``deduplicate``) and re-selections of SQL columns under their own names; every other part
is returned as a :class:`~workbench.dagger_import.keys.Dropped` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workbench.dagger_import.keys import Dropped
from workbench.exceptions import clip

POST = "PROCESSOR_POSTPROCESSOR_CONFIG"
PRE = "PROCESSOR_PREPROCESSOR_CONFIG"

Transformer = Callable[[str, dict[str, Any]], dict[str, Any]]


def _deduplication(key: str, args: dict[str, Any]) -> dict[str, Any]:
    column, ttl = args.get("key_column"), args.get("ttl_in_seconds")
    try:
        seconds = int(str(ttl))
    except ValueError:
        raise _Unusable(
            key, f"ttl_in_seconds must be a number of seconds, got {clip(ttl)}"
        ) from None
    if not column or seconds <= 0:
        raise _Unusable(key, "needs key_column and a positive ttl_in_seconds")
    return {"deduplicate": {"keys": [str(column)], "within": f"{seconds}s"}}


#: transformation_class (last dotted part) → spec keys it becomes
TRANSFORMERS: dict[str, Transformer] = {"DeDuplicationTransformer": _deduplication}


class _Unusable(Exception):
    def __init__(self, key: str, reason: str):
        self.dropped = Dropped(key, reason)


def enabled(props: dict[str, str], kind: str) -> bool:
    return props.get(f"PROCESSOR_{kind}PROCESSOR_ENABLE", "false").strip().lower() == "true"


def postprocessor(props: dict[str, str]) -> tuple[dict[str, Any], list[Dropped]]:
    """Spec keys from an enabled post-processor, and the parts that cannot be carried."""
    if not enabled(props, "POST"):
        return {}, []
    config, dropped = _config(props, POST)
    if config is None:
        return {}, dropped
    spec: dict[str, Any] = {}
    for name, source in (config.get("external_source") or {}).items():
        if source:
            dropped.append(Dropped(f"{POST}.external_source.{name}", _enrichment(name)))
    dropped += _internal(config.get("internal_source") or [])
    for i, item in enumerate(config.get("transformers") or []):
        key = f"{POST}.transformers[{i}]"
        try:
            spec |= _transformer(key, item)
        except _Unusable as err:
            dropped.append(err.dropped)
    for extra in sorted(set(config) - {"external_source", "internal_source", "transformers"}):
        dropped.append(Dropped(f"{POST}.{extra}", "not known to the importer"))
    fields = _internal_fields(config.get("internal_source") or [])
    if "deduplicate" in spec and fields:  # Dagger writes the internal source's fields
        spec["deduplicate"]["columns"] = fields
    return spec, dropped


def preprocessor(props: dict[str, str]) -> list[Dropped]:
    """An enabled pre-processor transforms input tables: none of it can be carried."""
    if not enabled(props, "PRE"):
        return []
    config, dropped = _config(props, PRE)
    for i, table in enumerate((config or {}).get("table_transformers") or []):
        classes = [t.get("transformation_class") for t in table.get("transformers") or []]
        dropped.append(
            Dropped(
                f"{PRE}.table_transformers[{i}]",
                f"transformers on input table {clip(table.get('table_name'))} "
                f"({', '.join(map(str, classes))}) are not supported",
            )
        )
    return dropped


def _config(props: dict[str, str], key: str) -> tuple[dict | None, list[Dropped]]:
    raw = props.get(key, "").strip()
    if not raw:
        return None, []
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as err:
        return None, [Dropped(key, f"not valid JSON ({err.msg}, column {err.colno})")]
    if not isinstance(config, dict):
        return None, [Dropped(key, "expected a JSON object")]
    return config, []


def _enrichment(name: str) -> str:
    labels = {"es": "Elasticsearch", "http": "HTTP", "pg": "Postgres", "grpc": "gRPC"}
    return f"{labels.get(name, clip(name))} enrichment is not supported"


def _internal(sources: list[Any]) -> list[Dropped]:
    """``internal_source`` items other than a SQL column under its own name."""
    dropped = []
    for i, item in enumerate(sources):
        same = (
            isinstance(item, dict)
            and item.get("type") == "sql"
            and item.get("value") in (item.get("output_field"), "*")
        )
        if not same:
            dropped.append(
                Dropped(
                    f"{POST}.internal_source[{i}]",
                    f"only SQL columns under their own name are carried, got {clip(item)}; "
                    "compute it in FLINK_SQL_QUERY",
                )
            )
    return dropped


def _internal_fields(sources: list[Any]) -> list[str]:
    """The columns a post-processor's ``internal_source`` outputs (none when it passes
    every SQL column on, with ``*``)."""
    items = [item for item in sources if isinstance(item, dict)]
    if any("*" in (item.get("value"), item.get("output_field")) for item in items):
        return []
    return [str(item.get("output_field")) for item in items]


def _transformer(key: str, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _Unusable(key, "expected an object with transformation_class")
    name = str(item.get("transformation_class", "")).rsplit(".", 1)[-1]
    make = TRANSFORMERS.get(name)
    if make is None:
        known = ", ".join(TRANSFORMERS)
        raise _Unusable(key, f"transformer {clip(name)} is not supported (carried: {known})")
    return make(key, item.get("transformation_arguments") or {})
