"""Protobuf schemas: compile .proto files, find messages, and their Spark types.

See :mod:`workbench.schemas.registry` (messages by full, Java or simple name),
:mod:`workbench.schemas.compiler` (protoc via grpcio-tools) and
:mod:`workbench.schemas.sparktypes` (what ``from_protobuf`` returns).
"""

from workbench.schemas.compiler import ProtoCompileError, compile_protos
from workbench.schemas.registry import (
    FieldInfo,
    SchemaRegistry,
    default_registry,
    default_registry_with,
)
from workbench.schemas.sparktypes import ddl, spark_schema

__all__ = [
    "FieldInfo",
    "ProtoCompileError",
    "SchemaRegistry",
    "compile_protos",
    "ddl",
    "default_registry",
    "default_registry_with",
    "spark_schema",
]
