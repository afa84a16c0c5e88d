"""``docs/configuration.md``, generated from the settings' models: the environment
(:class:`workbench.settings.Settings`), ``service.yaml``
(:class:`workbench.jobs.config.ServiceConfig`), the dashboard's YAML file
(:class:`workbench.dashboard.config.DashboardConfig`) and the Jupyter server's traits
(:class:`workbench.server.extension.WorkbenchService`).

    python -m workbench.cli.configuration > docs/configuration.md

It lives with the command line, the top of the package, because it reads the models of
every layer; ``tests/test_settings.py`` fails when the file differs from what it writes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from workbench.settings import DASHBOARD_OVERRIDES, DASHBOARD_PREFIX, Settings, variables

if TYPE_CHECKING:
    from traitlets.config import Configurable

COMMAND = "python -m workbench.cli.configuration > docs/configuration.md"
_NAMES = {str: "text", int: "integer", float: "number", bool: "boolean", Path: "path"}


def document() -> str:
    """The whole of ``docs/configuration.md``."""
    from workbench.dashboard.config import DashboardConfig
    from workbench.jobs.config import ServiceConfig
    from workbench.server.extension import WorkbenchService

    parts = [
        "# Configuration",
        f"Generated from the settings' models by `{COMMAND}`; do not edit by hand.",
        "## Environment variables",
        "Read by `workbench.settings`, the one module that reads the environment. An empty "
        "variable counts as unset.",
        _table(("Variable", "Type", "Default", "Description"), _environment()),
        "## `service.yaml`",
        "The job service's settings: `STATE/service.yaml` (`STATE`: `workbench serve "
        "--state`, `c.WorkbenchService.state_dir`, `$WORKBENCH_SERVICE_STATE`, else "
        "`$WORKBENCH_HOME/service`). Every key is optional; relative paths are relative to "
        "the file. `NAME` stands for a name you choose.",
        _table(("Key", "Type", "Default", "Description"), _model_rows(ServiceConfig)),
        "## The dashboard",
        "`workbench dashboard --config FILE` (or `$WORKBENCH_DASHBOARD_CONFIG`) names a YAML "
        "file of these keys; a variable overrides the file, a command-line option both.",
        _table(("Key", "Type", "Default", "Variable", "Description"), _dashboard(DashboardConfig)),
        "## The job service in Jupyter",
        "Traits of the Jupyter server extension (`jupyter_server_config.py`: "
        "`c.WorkbenchService.state_dir = ...`, or `--WorkbenchService.state_dir=...`).",
        _table(("Trait", "Type", "Default", "Description"), _traits(WorkbenchService)),
    ]
    return "\n\n".join(parts) + "\n"


def _environment() -> Iterator[tuple[str, ...]]:
    for field, info in Settings.model_fields.items():
        names = ", ".join(f"`{name}`" for name in variables(field))
        yield names, _type(info.annotation), _default(info), info.description or ""


def _model_rows(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, ...]]:
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("internal"):
            continue
        key = f"{prefix}{name}"
        inner, keyed = _nested(info.annotation)
        if inner is None or keyed or not _all_defaults(inner):
            yield f"`{key}`", _type(info.annotation), _default(info), info.description or ""
        if inner is not None:
            yield from _model_rows(inner, f"{key}.NAME." if keyed else f"{key}.")


def _nested(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model a key holds (itself, optional, or as ``{NAME: model}``), and whether by name."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if _is_model(annotation):
        return annotation, False
    if typing.get_origin(annotation) is dict and _is_model(args[-1]):
        return args[-1], True
    if _is_union(annotation) and len(args) == 1 and _is_model(args[0]):
        return args[0], False
    return None, False


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType)


def _all_defaults(model: type[BaseModel]) -> bool:
    return all(not f.is_required() for f in model.model_fields.values())


def _type(kind: Any) -> str:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if _is_union(kind):
        return " or ".join(_type(a) for a in args if a is not type(None))
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (list, tuple):
        return f"list of {_type(args[0])}"
    if origin is dict and _is_model(args[-1]):
        return "mapping by name"
    if origin is dict and args[-1] in _NAMES:
        return f"mapping of {_type(args[-1])}"
    if origin is dict or _is_model(kind):
        return "mapping"
    return _NAMES.get(kind, "any")


def _default(info: FieldInfo) -> str:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    if "shown_default" in extra:
        return str(extra["shown_default"])
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    value = info.get_default(call_default_factory=True)
    return _shown(value.model_dump() if isinstance(value, BaseModel) else value)


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
        return "{" + ", ".join(f"{k}: …" for k in value) + "}"
    if value == () or value == [] or value == {}:
        return f"`{'{}' if value == {} else '[]'}`"
    return f"`{value}`" if not isinstance(value, str) or value else '`""`'


def _dashboard(config: type) -> Iterator[tuple[str, ...]]:
    hints = typing.get_type_hints(config)
    variables = {setting: DASHBOARD_PREFIX + key for key, setting in DASHBOARD_OVERRIDES.items()}
    for f in dataclasses.fields(config):
        if "default" in f.metadata:
            default = f"`{f.metadata['default']}`"
        elif f.default_factory is not dataclasses.MISSING:
            default = _shown(f.default_factory())
        else:
            default = _shown(f.default)
        variable = f"`{variables[f.name]}`" if f.name in variables else ""
        yield f"`{f.name}`", _type(hints[f.name]), default, variable, f.metadata.get("help", "")


def _traits(configurable: type[Configurable]) -> Iterator[tuple[str, ...]]:
    for name, trait in configurable.class_traits(config=True).items():
        values = getattr(trait, "values", None)
        kind = " \\| ".join(f"`{v}`" for v in values) if values else type(trait).__name__
        kind = {"Unicode": "text", "Bool": "boolean"}.get(kind, kind)
        default = _shown(trait.default_value)
        yield f"`c.{configurable.__name__}.{name}`", kind, default, trait.help


def _table(header: tuple[str, ...], rows: Iterator[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    print(document(), end="")


if __name__ == "__main__":
    main()
