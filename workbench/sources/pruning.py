"""Which message fields a dagger reads, so its decoders decode those only.

Spark prunes the columns a query does not read, but not inside a UDF's result: the JVM
decoder builds every field of every record (strings, maps, repeated messages). A surge
dagger reads 6 of BookingLogMessage's 17 fields.

:func:`read_fields` walks the optimized plan of a job's result (as JSON, so nothing is
truncated) and returns, per stream table, the top-level fields its SQL reads through
``_decoded.message.<field>`` (a stream's ``_decoded`` is the one its dead-letter tap,
``dead_letters_<table>``, reads: :mod:`workbench.sources.letters`); None for a table whose
every field is read (``SELECT *``, the message as one struct, a use of ``_decoded`` it does
not know). The job then opens its streams again with decoders of those fields
(:func:`workbench.sources.kafka.open_stream`) and keeps that plan if its result has the
same schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from workbench import __version__
from workbench.paths import subdir
from workbench.sources.letters import UDF_PREFIX
from workbench.sources.protobuf import MESSAGE

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame

    from workbench.spec import DaggerSpec

DECODED_COLUMN = "_decoded"
_PREFIX = "org.apache.spark.sql.catalyst."
_ATTRIBUTE = _PREFIX + "expressions.AttributeReference"
_FIELD = _PREFIX + "expressions.GetStructField"
_UDF = _PREFIX + "expressions.ScalaUDF"
_PROJECT = _PREFIX + "plans.logical.Project"


class Node:
    """One node of a plan or expression tree from Spark's ``toJSON`` (pre-order, flat)."""

    def __init__(self, item: dict[str, Any], children: list[Node]):
        self.item, self.children = item, children

    @property
    def kind(self) -> str:
        return str(self.item.get("class", ""))

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()


def tree(flat: list[dict[str, Any]]) -> Node:
    """The tree of a pre-order list whose items say how many children follow them."""
    items = iter(flat)

    def take() -> Node:
        item = next(items)
        return Node(item, [take() for _ in range(int(item.get("num-children", 0)))])

    return take()


def expressions(plan_node: Node) -> Iterator[Node]:
    """The expression trees a plan node holds (conditions, project lists, metrics...)."""
    for value in plan_node.item.values():
        if isinstance(value, list) and value and isinstance(value[0], dict) and "class" in value[0]:
            yield tree(value)
        elif isinstance(value, list):
            for element in value:
                if isinstance(element, list) and element and isinstance(element[0], dict):
                    yield tree(element)


def read_fields(result: DataFrame) -> dict[str, frozenset[str] | None]:
    """Per stream table, the top-level message fields ``result``'s optimized plan reads (None:
    all of them); ``{}`` when the plan cannot be read (then decode everything)."""
    try:  # optimizedPlan() refuses a streaming plan outside writeStream: run the optimizer
        session = result.sparkSession._jsparkSession
        analyzed = result._jdf.queryExecution().analyzed()
        plan_json = session.sessionState().optimizer().execute(analyzed).toJSON()
    except Exception:  # noqa: BLE001 - no pruning is always correct
        return {}
    return fields_in(json.loads(plan_json))


def fields_in(plan: list[dict[str, Any]]) -> dict[str, frozenset[str] | None]:
    """:func:`read_fields` over a plan's ``toJSON`` list."""
    root = tree(plan)
    tables: dict[int, str] = {}  # the _decoded attribute's exprId -> its stream table
    for node in root.walk():
        for expression in expressions(node):
            for tap in expression.walk():
                name = str(tap.item.get("udfName") or "")
                if tap.kind == _UDF and name.startswith(UDF_PREFIX):
                    for e in tap.walk():
                        if e.kind == _ATTRIBUTE and e.item.get("name") == DECODED_COLUMN:
                            tables[int(e.item["exprId"]["id"])] = name[len(UDF_PREFIX) :]
    read: dict[str, set[str] | None] = {table: set() for table in tables.values()}
    every: dict[str, set[str]] = {}
    for node in root.walk():
        for expression in expressions(node):
            if node.kind == _PROJECT and _table_of(expression, tables) is not None:
                continue  # ``_decoded`` passed through a projection: read where it is used
            _collect(expression, tables, read)
            for e in expression.walk():
                table = _table_of(e, tables)
                if table is not None:
                    every[table] = set(_message_fields(e))
    return {
        t: None if f is None or f >= every.get(t, set()) else frozenset(f) for t, f in read.items()
    }


def _collect(e: Node, tables: dict[int, str], read: dict[str, set[str] | None]) -> None:
    """Record in ``read`` what ``e`` reads of each table's ``_decoded`` struct."""
    if e.kind == _FIELD and e.children:
        inner = e.children[0]
        table = _table_of(inner, tables)
        if table is not None:  # _decoded.error or _decoded.message (the whole message)
            if _decoded_field(inner, e) == MESSAGE:
                read[table] = None
            return
        decoded = inner.children[0] if inner.kind == _FIELD and inner.children else None
        table = None if decoded is None else _table_of(decoded, tables)
        if decoded is not None and table is not None and _decoded_field(decoded, inner) == MESSAGE:
            fields = read[table]  # _decoded.message.<field>
            if fields is not None:
                fields.add(_message_field(decoded, e))
            return
    table = _table_of(e, tables)
    if table is not None:  # the whole _decoded struct
        read[table] = None
        return
    for child in e.children:
        _collect(child, tables, read)


def _table_of(e: Node, tables: dict[int, str]) -> str | None:
    """The stream table whose ``_decoded`` attribute ``e`` is, if it is one."""
    if e.kind == _ATTRIBUTE and e.item.get("name") == DECODED_COLUMN:
        return tables.get(int(e.item["exprId"]["id"]))
    return None


def _decoded_field(decoded: Node, get: Node) -> str:
    """The field of the ``_decoded`` struct (message or error) the GetStructField ``get`` takes."""
    return str(decoded.item["dataType"]["fields"][int(get.item["ordinal"])]["name"])


def _message_field(decoded: Node, get: Node) -> str:
    """The message field the GetStructField ``get`` takes from ``_decoded.message``."""
    return _message_fields(decoded)[int(get.item["ordinal"])]


def _message_fields(decoded: Node) -> list[str]:
    """The message's field names, from the ``_decoded`` attribute's type."""
    fields = decoded.item["dataType"]["fields"]
    message = next(f for f in fields if f["name"] == MESSAGE)["type"]["fields"]
    return [str(f["name"]) for f in message]


# --- planning a job once: the fields an earlier start of the same dagger read ----------

#: What a spec may change without changing the fields its plan reads: where and when it
#: runs, not what it computes. Any other key (a new one too) is part of :func:`plan_key`.
UNPLANNED_SPEC_KEYS = frozenset(
    {"name", "team", "description", "trigger_interval", "emit", "sinks", "dead_letter",
     "checkpoint", "spark_conf", "resources", "alerts", "notifiers"}
)  # fmt: skip
UNPLANNED_STREAM_KEYS = frozenset(
    {"cluster", "bootstrap_servers", "topics", "topic_pattern", "group_id",
     "starting_offsets", "max_offsets_per_trigger", "kafka_options"}
)  # fmt: skip


def plan_key(spec: DaggerSpec, schemas: str, *extra: object) -> str:
    """A digest of everything that decides which fields a dagger's plan reads: its SQL and
    planning keys, its streams' tables and messages, ``schemas`` (what names the schemas'
    descriptors: the name of the registry's ``descriptor_set_path()``, their digest), the
    workbench's and Spark's versions, and ``extra``."""
    import hashlib

    import pyspark

    data = spec.model_dump(mode="json", exclude=set(UNPLANNED_SPEC_KEYS))
    data["streams"] = [
        {k: v for k, v in stream.items() if k not in UNPLANNED_STREAM_KEYS}
        for stream in data["streams"]
    ]
    text = json.dumps([__version__, pyspark.__version__, data, schemas, *extra], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _known_path(key: str) -> Path:

    return subdir("plans") / f"{key}.json"


def known_fields(key: str) -> tuple[dict[str, frozenset[str] | None], str] | None:
    """The fields and result schema (JSON) :func:`remember` kept for ``key``, or None."""
    try:
        data = json.loads(_known_path(key).read_text())
        fields = {t: None if f is None else frozenset(f) for t, f in data["fields"].items()}
        return fields, str(data["schema"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def remember(key: str, fields: dict[str, frozenset[str] | None], schema: str) -> None:
    """Keep the fields a plan read and its result's schema for the next start (best
    effort: a start that cannot write it plans twice next time, as before)."""
    import os
    import tempfile

    data = {"fields": {t: None if f is None else sorted(f) for t, f in fields.items()},
            "schema": schema}  # fmt: skip
    try:
        path = _known_path(key)  # a home it cannot write to: nothing kept
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as out:
            json.dump(data, out)
        os.replace(out.name, path)
    except OSError:
        return
