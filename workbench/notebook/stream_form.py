"""One input stream of the Composer: message, topics, table, consumer group, event time.

A :class:`StreamForm` is the "stream details" box of "Create a new dagger": a protobuf
message picker over the schema registry (with the message's field tree), a topic
multiselect listing the cluster's topics, the table name, the consumer group and the
event-timestamp field (the message's ``google.protobuf.Timestamp`` fields). Each field
has its own inline error line; :meth:`StreamForm.show_error` puts a spec error next to
the field its key names (``topics``, ``event_timestamp_field``...), and anything else
(an unknown field, a stream-level problem) under the box.
"""

from __future__ import annotations

import html
import re
import socket
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from workbench.exceptions import WorkbenchError
from workbench.kafka.admin import list_topics
from workbench.notebook.widgets import labelled

if TYPE_CHECKING:
    from workbench.schemas import FieldInfo, SchemaRegistry
    from workbench.spec import StreamSpec

_TIME_TYPE = "google.protobuf.Timestamp"
_EPOCH_TYPES = {"int64", "uint64", "sint64", "fixed64", "sfixed64"}
_PLACEHOLDER = ("— choose a message —", "")
ERROR_STYLE = "color:#b00020;font-size:90%;white-space:pre-wrap;font-family:monospace"

TopicLister = Callable[[str], list[str]]


def error_html(message: str) -> str:
    """An inline error line (empty when there is no error)."""
    return f'<div style="{ERROR_STYLE}">⚠ {html.escape(message)}</div>' if message else ""


class Field:
    """A labelled input with its own error line right under it."""

    def __init__(self, widget: W.Widget, label: str = ""):
        self.input = widget
        self.error = W.HTML("")
        children = [widget, self.error]
        if label and not getattr(widget, "description", ""):
            children.insert(0, W.HTML(f"<b>{html.escape(label)}</b>"))
        self.box = W.VBox(children)

    def show_error(self, message: str) -> None:
        self.error.value = error_html(message)

    @property
    def message(self) -> str:
        """The error shown, as plain text ('' when none)."""
        text = re.sub(r"<[^>]+>", "", self.error.value)
        return html.unescape(text).removeprefix("⚠ ")


def named_key(message: str, keys: Iterable[str]) -> str:
    """The first of ``keys`` a message names in quotes (``needs 'database'``), or ''."""
    known = set(keys)
    return next((k for k in re.findall(r"'(\w+)'", message) if k in known), "")


def _kafka_topics(bootstrap: str) -> list[str]:

    return list_topics(bootstrap, timeout=5.0)


def _listening(bootstrap: str, timeout: float = 0.5) -> bool:
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def _default_table(message: str) -> str:
    simple = message.rsplit(".", 1)[-1]
    for suffix in ("LogMessage", "Message", "Log"):
        if simple.endswith(suffix) and simple != suffix:
            simple = simple[: -len(suffix)]
            break
    return re.sub(r"(?<!^)(?=[A-Z])", "_", simple).lower()


def time_fields(registry: SchemaRegistry, message: str) -> list[str]:
    """The message's top-level Timestamp fields; epoch-millis integers when it has none."""
    descriptor = registry.descriptor(message)
    stamps = [
        f.name
        for f in descriptor.fields
        if f.message_type is not None and f.message_type.full_name == _TIME_TYPE
    ]
    if stamps:
        return stamps
    return [
        f.name
        for f in registry.fields(message)
        if f.kind == "scalar" and f.type in _EPOCH_TYPES and not f.repeated
    ]


def field_tree_html(fields: list[FieldInfo]) -> str:
    """The message's fields as nested lists: ``name type #number``; messages fold open."""

    def item(f: FieldInfo) -> str:
        kind = f"repeated {f.type}" if f.repeated else f.type
        head = (
            f"<code>{html.escape(f.name)}</code> <i>{html.escape(kind)}</i> "
            f"<span style='color:#888'>#{f.number}</span>"
        )
        if f.enum_values:
            head += f" <span style='color:#888'>({html.escape(', '.join(f.enum_values))})</span>"
        if not f.children:
            return f"<li>{head}</li>"
        inner = "".join(item(c) for c in f.children)
        return f"<li><details><summary>{head}</summary><ul>{inner}</ul></details></li>"

    body = "".join(item(f) for f in fields)
    return f"<ul style='margin:0;padding-left:1.2em;font-size:90%'>{body}</ul>"


class StreamForm:
    """The widgets of ``streams[index]``; :meth:`data` is the stream's spec mapping."""

    #: spec keys of a stream → the attribute holding their field
    FIELDS = {
        "table": "table",
        "message": "message",
        "topics": "topics",
        "topic_pattern": "topics",
        "bootstrap_servers": "bootstrap",
        "group_id": "group",
        "event_timestamp_field": "event_time",
    }

    def __init__(
        self,
        index: int,
        registry: SchemaRegistry,
        *,
        bootstrap: str = "127.0.0.1:9092",
        list_topics: TopicLister = _kafka_topics,
    ):
        self.index, self.registry, self._list_topics = index, registry, list_topics
        messages = [_PLACEHOLDER, *((m, m) for m in registry.messages())]
        self.message = Field(W.Dropdown(options=messages, value=""), "Protobuf message")
        self.field_tree = W.HTML("")
        self.bootstrap = Field(
            labelled(W.Text(value=bootstrap), "Bootstrap", "Kafka bootstrap servers, host:port")
        )
        self.refresh = W.Button(description="List topics", icon="refresh")
        self.topics = Field(W.SelectMultiple(options=[], rows=6), "Topics")
        self.pattern = labelled(
            W.Text(placeholder="or a topic regex (Dagger style)"),
            "Pattern",
            "A regular expression of topic names, instead of a list (Dagger's topic pattern)",
        )
        self.table = Field(
            labelled(W.Text(placeholder="e.g. booking"), "Table", "The name the SQL reads it by")
        )
        self.group = Field(
            labelled(
                W.Text(placeholder="optional"),
                "Consumer group",
                "The job's Kafka consumer group id (previews never use it)",
            )
        )
        self.event_time = Field(
            labelled(
                W.Dropdown(options=[]),
                "Event time",
                "The Timestamp field that becomes rowtime (the watermark follows it)",
            )
        )
        self.errors = W.HTML("")
        self.message.input.observe(self._on_message, names="value")
        self.refresh.on_click(lambda _: self.refresh_topics())
        self.box = W.VBox(
            [
                W.HTML(f"<b>Stream {index + 1}</b>"),
                self.message.box,
                W.Accordion([self.field_tree], titles=("Fields",), selected_index=None),
                W.HBox([self.bootstrap.box, self.refresh]),
                self.topics.box,
                self.pattern,
                self.table.box,
                self.group.box,
                self.event_time.box,
                self.errors,
            ],
            layout=W.Layout(border="1px solid #ddd", padding="6px", margin="4px 0"),
        )

    # --- filling ------------------------------------------------------------------------

    def refresh_topics(self, quick: bool = False) -> list[str]:
        """List the cluster's topics into the multiselect (keeping the selection).

        ``quick`` first checks that something listens at the first bootstrap address, so
        a form opened with no broker around does not wait for Kafka's timeout."""
        selected = tuple(self.topics.input.value)
        bootstrap = self.bootstrap.input.value.strip()
        try:
            if quick and not _listening(bootstrap):
                raise WorkbenchError(f"No Kafka broker answers at {bootstrap}.")
            found = self._list_topics(bootstrap)
        except Exception as err:  # shown under the topics; the form stays usable
            self.topics.show_error(f"{err} Set the bootstrap servers, then List topics.")
            return []
        self.topics.show_error("")
        self.topics.input.options = sorted(set(found) | set(selected))
        self.topics.input.value = selected
        return found

    def _on_message(self, change: dict[str, Any]) -> None:
        name = change["new"]
        self.message.show_error("")
        if not name:
            self.field_tree.value, self.event_time.input.options = "", []
            return
        try:
            self.field_tree.value = field_tree_html(self.registry.fields(name))
            options = time_fields(self.registry, name)
        except WorkbenchError as err:  # a loaded spec naming a message the registry lacks
            self.message.show_error(str(err))
            self.field_tree.value, self.event_time.input.options = "", []
            return
        self.event_time.input.options = options
        if options:
            preferred = "event_timestamp" if "event_timestamp" in options else options[0]
            self.event_time.input.value = preferred
        if not self.table.input.value.strip():
            self.table.input.value = _default_table(name)

    def load(self, stream: StreamSpec) -> None:
        """Fill the form from an existing stream spec."""
        self.bootstrap.input.value = stream.bootstrap_servers
        try:
            name = self.registry.resolve(stream.message)
        except WorkbenchError:  # kept as written; Check shows the error next to it
            name = stream.message
            self.message.input.options = [*self.message.input.options, (name, name)]
        self.message.input.value = name
        self.table.input.value = stream.table
        topics = tuple(stream.topics or ())
        self.topics.input.options = sorted(set(self.topics.input.options) | set(topics))
        self.topics.input.value = topics
        self.pattern.value = stream.topic_pattern or ""
        self.group.input.value = stream.group_id or ""
        options = list(self.event_time.input.options)
        if stream.event_timestamp_field not in options:
            self.event_time.input.options = [*options, stream.event_timestamp_field]
        self.event_time.input.value = stream.event_timestamp_field

    # --- reading ------------------------------------------------------------------------

    def data(self) -> dict[str, Any]:
        """The stream as a spec mapping (empty inputs are left out, so defaults apply)."""
        data: dict[str, Any] = {
            "table": self.table.input.value.strip(),
            "message": self.message.input.value,
            "bootstrap_servers": self.bootstrap.input.value.strip(),
            "topics": list(self.topics.input.value),
            "topic_pattern": self.pattern.value.strip(),
            "group_id": self.group.input.value.strip(),
            "event_timestamp_field": self.event_time.input.value or "",
        }
        return {k: v for k, v in data.items() if v not in ("", [], None)}

    # --- errors -------------------------------------------------------------------------

    def show_error(self, key: str, message: str) -> None:
        """Show a problem with this stream's ``key`` (``topics``, ``message``...) next to
        its field; keys without a field of their own go under the box."""
        attr = self.FIELDS.get(key.split(".")[0].split("[")[0] or named_key(message, self.FIELDS))
        if attr is None:
            where = f"'{key}': " if key else ""
            self.errors.value += error_html(f"{where}{message}")
        else:
            field: Field = getattr(self, attr)
            field.show_error(message)

    def clear_errors(self) -> None:
        for attr in set(self.FIELDS.values()):
            getattr(self, attr).show_error("")
        self.errors.value = ""

    def messages(self) -> dict[str, str]:
        """The errors shown, by field (``errors`` for the box's own line)."""
        found = {a: getattr(self, a).message for a in set(self.FIELDS.values())}
        found["errors"] = html.unescape(re.sub(r"<[^>]+>", "", self.errors.value))
        return {k: v for k, v in found.items() if v}
