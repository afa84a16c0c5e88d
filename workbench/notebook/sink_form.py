"""The sink part of the Composer: a sink type from the registry and its keys as inputs."""

from __future__ import annotations

import typing
from typing import Any

import ipywidgets as W
import yaml

from workbench.notebook.stream_form import Field, error_html, named_key
from workbench.notebook.widgets import labelled
from workbench.sinks.registry import SINKS

_NO_SINK = "(none)"


def _is_text(annotation: Any) -> bool:
    args = typing.get_args(annotation) or (annotation,)
    return all(a in (str, type(None)) for a in args)


class SinkForm:
    """The sink: a type from the sink registry and one text input per key of its config.

    Empty inputs keep the key's default; non-text keys are read as YAML (``[a, b]``, ``1``).
    """

    def __init__(self) -> None:

        self._registry = SINKS
        self.kind = Field(
            labelled(
                W.Dropdown(options=[_NO_SINK, *SINKS.results.names()]), "Sink", "Where rows go"
            )
        )
        self.keys: dict[str, Field] = {}
        self.keys_box = W.VBox([])
        self.errors = W.HTML("")
        self.kind.input.observe(lambda _: self._build(), names="value")
        self.box = W.VBox([self.kind.box, self.keys_box, self.errors])

    def _build(self, values: dict[str, Any] | None = None) -> None:
        self.keys = {}
        if self.kind.input.value != _NO_SINK:
            model = self._registry.results.get(self.kind.input.value)
            for key, info in model.model_fields.items():
                if key == "type":
                    continue
                star = " *" if info.is_required() else ""
                hint = (
                    "" if info.is_required() else str(info.get_default(call_default_factory=True))
                )
                tip = info.description or key
                self.keys[key] = Field(labelled(W.Text(placeholder=hint), f"{key}{star}", tip))
        for key, value in (values or {}).items():
            if key in self.keys:
                shown = value if isinstance(value, str) else yaml.safe_dump(value).strip()
                self.keys[key].input.value = shown.removesuffix("\n...")
        self.keys_box.children = [f.box for f in self.keys.values()]

    def load(self, sink: Any) -> None:
        self.kind.input.unobserve_all("value")
        self.kind.input.value = sink.type
        self.kind.input.observe(lambda _: self._build(), names="value")
        self._build(sink.model_dump(mode="json", exclude_defaults=True))

    def data(self) -> list[dict[str, Any]]:
        if self.kind.input.value == _NO_SINK:
            return []
        model = self._registry.results.get(self.kind.input.value)
        data: dict[str, Any] = {"type": self.kind.input.value}
        for key, field in self.keys.items():
            text = field.input.value.strip()
            if text:
                plain = _is_text(model.model_fields[key].annotation)
                data[key] = text if plain else yaml.safe_load(text)
        return [data]

    def show_error(self, key: str, message: str) -> None:
        key = key or named_key(message, self.keys)
        field = self.keys.get(key) or (self.kind if key == "type" else None)
        if field is None:
            self.errors.value += error_html(f"{key}: {message}" if key else message)
        else:
            field.show_error(message)

    def clear_errors(self) -> None:
        for field in [self.kind, *self.keys.values()]:
            field.show_error("")
        self.errors.value = ""
