"""Protobuf schemas: compile .proto files, find messages, and their Spark types.

See :mod:`workbench.schemas.registry` (messages by full, Java or simple name),
:mod:`workbench.schemas.compiler` (protoc via grpcio-tools) and
:mod:`workbench.schemas.sparktypes` (what ``from_protobuf`` returns). The names below load
their module (protobuf, PySpark) when first asked, so ``import workbench.spec`` stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.schemas.compiler import ProtoCompileError, compile_protos
    from workbench.schemas.registry import (
        FieldInfo,
        SchemaRegistry,
        default_registry,
        default_registry_with,
    )
    from workbench.schemas.sparktypes import ddl, spark_schema

#: How many times a message may hold itself along a path (a spec's ``max_recursion_depth``).
DEFAULT_RECURSION_DEPTH = 3

_HOMES = {
    "FieldInfo": "registry",
    "ProtoCompileError": "compiler",
    "SchemaRegistry": "registry",
    "compile_protos": "compiler",
    "ddl": "sparktypes",
    "default_registry": "registry",
    "default_registry_with": "registry",
    "spark_schema": "sparktypes",
}
__all__ = [
    "DEFAULT_RECURSION_DEPTH",
    "FieldInfo",
    "ProtoCompileError",
    "SchemaRegistry",
    "compile_protos",
    "ddl",
    "default_registry",
    "default_registry_with",
    "spark_schema",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'workbench.schemas' has no attribute '{name}'")
    return getattr(import_module(f"workbench.schemas.{_HOMES[name]}"), name)
