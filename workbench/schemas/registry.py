"""The protobuf messages the workbench knows, and how to find one by name.

A :class:`SchemaRegistry` merges folders of ``.proto`` files (compiled with
:mod:`workbench.schemas.compiler`), descriptor-set files (``.desc``/``.pb``) and
descriptor sets served over http(s) into one ``FileDescriptorSet``. Messages are
found by full proto name, by the Java class name Dagger properties use
(``com.x.Msg``, ``com.x.Outer$Msg``, ``com.x.Outer.Msg``) or by a unique simple name.
"""

from __future__ import annotations

import functools
import hashlib
import os
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pb2 import FileDescriptorSet as FileSet
from google.protobuf.message import DecodeError

from workbench.exceptions import SchemaError, UnknownNameError
from workbench.paths import subdir
from workbench.schemas.compiler import compile_protos
from workbench.settings import settings
from workbench.urls import http_url_problem

BUNDLED_PROTOS = Path(__file__).resolve().parent / "protos"
DESCRIPTOR_SUFFIXES = (".desc", ".pb")
WELL_KNOWN = "google.protobuf."
_TYPE_NAMES = {
    getattr(FieldDescriptor, n): n[5:].lower()
    for n in dir(FieldDescriptor)
    if n.startswith("TYPE_")
}


@dataclass
class FieldInfo:
    """One field of a message, for display.

    ``type`` is the proto type as written (``string``, ``esb.booking.ServiceType``,
    ``map<string, string>``); ``kind`` is scalar, enum, message or map; ``children`` are
    the fields of a nested message (empty when it recurses into an enclosing message, and for
    the ``google.protobuf`` well-known types, which decode to one value: see sparktypes).
    """

    name: str
    number: int
    type: str
    kind: str
    repeated: bool = False
    enum_values: list[str] = field(default_factory=list)
    children: list[FieldInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def label(self) -> str:
        """``name: [repeated ]type``, with an enum's value names, which SQL compares it with:
        ``service_type: esb.booking.ServiceType (enum: SERVICE_TYPE_UNKNOWN, GO_RIDE, ...)``."""
        repeated = "repeated " if self.repeated else ""
        values = f" (enum: {', '.join(self.enum_values)})" if self.kind == "enum" else ""
        return f"{self.name}: {repeated}{self.type}{values}"


def tree_lines(fields: Iterable[FieldInfo], indent: str = "  ") -> list[str]:
    """A field tree as text, one field a line (number and :meth:`FieldInfo.label`), nested
    fields indented under their message: ``workbench schemas show`` and ``wb.schema()``."""
    lines = []
    for f in fields:
        lines.append(f"{indent}{f.number:>3}  {f.label()}")
        lines.extend(tree_lines(f.children, indent + "     "))
    return lines


class SchemaRegistry:
    """Messages from ``sources``: folders, ``.desc``/``.pb`` files or http(s) URLs."""

    def __init__(self, *sources: str | Path):
        self.sources = [str(s) for s in sources]
        self._files = _merge(_load_sets(sources))
        self._pool = _pool(self._files)
        self._all = {d.full_name: d for f in self._files for d in _messages_of(self._pool, f)}
        self._java = _java_index(self._pool, self._files)
        self._simple = _simple_index(self.messages())
        self._desc_path: Path | None = None

    def messages(self) -> list[str]:
        """Full names of the user-facing messages (no ``google.*``, no map entries)."""
        return sorted(
            n
            for n, d in self._all.items()
            if not n.startswith("google.") and not d.GetOptions().map_entry
        )

    def resolve(self, name: str) -> str:
        """The full proto name for a full, Java class or unique simple message name."""
        key = name.strip().lstrip(".")
        if key in self._all:
            return key
        if key in self._java:
            return self._java[key]
        candidates = self._simple.get(key, [])
        if len(candidates) > 1:
            raise SchemaError(
                f"Message name '{name}' is ambiguous: {', '.join(candidates)}. Use the full name."
            )
        if candidates:
            return candidates[0]
        raise UnknownNameError("message", name, self.messages())

    def descriptor(self, name: str) -> Descriptor:
        """The message descriptor for ``name`` (see :meth:`resolve`)."""
        return self._all[self.resolve(name)]

    def fields(self, name: str) -> list[FieldInfo]:
        """The message's fields as a tree, for display (nested messages have children)."""
        return field_tree(self.descriptor(name))

    def field_by_number(self, message: str, number: int) -> FieldDescriptor:
        """The field numbered ``number`` (Dagger properties name fields by number)."""
        descriptor = self.descriptor(message)
        found = descriptor.fields_by_number.get(number)
        if found is None:
            known = [f"{f.number} ({f.name})" for f in descriptor.fields]
            raise UnknownNameError(
                "field number", str(number), known, where=f"in message {descriptor.full_name}"
            )
        return found

    def message_class(self, name: str) -> type[Any]:
        """A Python message class for encoding and decoding ``name``."""
        return message_factory.GetMessageClass(self.descriptor(name))

    def descriptor_set(self) -> bytes:
        """The merged, serialized ``FileDescriptorSet`` (what ``from_protobuf`` needs)."""
        return FileSet(file=self._files).SerializeToString(deterministic=True)

    def descriptor_set_path(self) -> Path:
        """A file holding :meth:`descriptor_set`, for ``from_protobuf(descFilePath=...)``.

        Give Spark the full name (:meth:`resolve`): it looks only at top-level messages and
        takes the first file's match for a simple name.
        """
        if self._desc_path is None or not self._desc_path.exists():
            data = self.descriptor_set()
            path = subdir("schemas") / f"registry-{hashlib.sha256(data).hexdigest()[:24]}.desc"
            if not path.exists():
                tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
                tmp.write_bytes(data)
                tmp.replace(path)
            self._desc_path = path
        return self._desc_path

    def __repr__(self) -> str:
        return f"SchemaRegistry({len(self.messages())} messages from {self.sources})"


def default_registry(refresh: bool = False) -> SchemaRegistry:
    """The bundled demo schemas plus the folders in ``$WORKBENCH_SCHEMAS`` (os.pathsep list)."""
    extra = settings().schemas
    if refresh:
        _registry_for.cache_clear()
    return _registry_for(extra)


@functools.cache
def _registry_for(extra: tuple[str, ...]) -> SchemaRegistry:
    return SchemaRegistry(BUNDLED_PROTOS, *extra)


def default_registry_with(extra: Iterable[str | Path] = ()) -> SchemaRegistry:
    """The default registry plus ``extra`` schema sources (a spec's ``schemas``, a
    user's ``--schemas``): the default registry itself when there are none."""
    sources = list(extra)
    return SchemaRegistry(*default_registry().sources, *sources) if sources else default_registry()


def _load_sets(sources: Iterable[str | Path]) -> list[tuple[str, FileSet]]:
    folders: list[Path] = []
    sets: list[tuple[str, FileSet]] = []
    for source in sources:
        text = str(source)
        if text.startswith(("http://", "https://")):
            sets.append((text, _parse_set(_download(text), text)))
            continue
        path = Path(text).expanduser()
        if path.is_dir():
            folders.append(path)
            sets += [(str(f), _read_set(f)) for f in _descriptor_files(path)]
        elif path.is_file() and path.suffix in DESCRIPTOR_SUFFIXES:
            sets.append((str(path), _read_set(path)))
        else:
            raise SchemaError(
                f"Schema source '{text}' is neither a folder, a .desc/.pb "
                "descriptor set nor an http(s) URL: point to one of those."
            )
    if any(next(f.rglob("*.proto"), None) for f in folders):
        compiled = compile_protos(folders)
        sets.insert(0, (", ".join(map(str, folders)), _read_set(compiled)))
    return sets


def _descriptor_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in DESCRIPTOR_SUFFIXES and p.is_file())


def _download(url: str) -> bytes:

    problem = http_url_problem(url)
    if problem:
        raise SchemaError(f"Schema source {problem}.")
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read()
    except (OSError, ValueError) as err:  # http.client.InvalidURL is a ValueError
        raise SchemaError(
            f"Could not download the descriptor set at {url}: {err}. "
            "Check the URL and that the server is reachable."
        ) from err


def _read_set(path: Path) -> FileSet:
    return _parse_set(path.read_bytes(), str(path))


def _parse_set(data: bytes, origin: str) -> FileSet:
    try:
        parsed = FileSet.FromString(data)
    except DecodeError as err:
        raise SchemaError(
            f"{origin} is not a serialized FileDescriptorSet ({err}): build one "
            "with protoc --descriptor_set_out=FILE --include_imports."
        ) from err
    if not parsed.file or not all(f.name for f in parsed.file):
        raise SchemaError(
            f"{origin} holds no protobuf file descriptors: build it with "
            "protoc --descriptor_set_out=FILE --include_imports."
        )
    return parsed


def _merge(sets: list[tuple[str, FileSet]]) -> list[descriptor_pb2.FileDescriptorProto]:
    """Files of all ``sets``, each once, dependencies first; a name defined twice differently
    is an error."""
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    origin: dict[str, str] = {}
    for where, fileset in sets:
        for proto in fileset.file:
            proto = _without_source_info(proto)
            if proto.name in files and files[proto.name] != proto:
                raise SchemaError(
                    f"'{proto.name}' differs between {origin[proto.name]} and "
                    f"{where}: keep one definition of it."
                )
            files.setdefault(proto.name, proto)
            origin.setdefault(proto.name, where)
    return _dependency_order(files)


def _without_source_info(proto: descriptor_pb2.FileDescriptorProto):
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(proto)
    copy.ClearField("source_code_info")
    return copy


def _dependency_order(files: dict[str, descriptor_pb2.FileDescriptorProto]):
    ordered: dict[str, descriptor_pb2.FileDescriptorProto] = {}

    def visit(name: str, importer: str) -> None:
        if name in ordered:
            return
        if name not in files:
            raise SchemaError(
                f"'{importer}' imports '{name}', which no schema source provides: "
                "add its folder, or build descriptor sets with --include_imports."
            )
        for dependency in files[name].dependency:
            visit(dependency, name)
        ordered[name] = files[name]

    for name in files:
        visit(name, name)
    return list(ordered.values())


def _pool(files: list[descriptor_pb2.FileDescriptorProto]) -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for proto in files:
        try:
            pool.Add(proto)
        except (TypeError, ValueError) as err:
            raise SchemaError(
                f"Cannot load '{proto.name}': {err}. Check that every schema "
                "source was built from the same .proto files."
            ) from err
    return pool


def _messages_of(
    pool: descriptor_pool.DescriptorPool, proto: descriptor_pb2.FileDescriptorProto
) -> list[Descriptor]:
    found: list[Descriptor] = []
    pending = list(pool.FindFileByName(proto.name).message_types_by_name.values())
    while pending:
        message = pending.pop()
        found.append(message)
        pending.extend(message.nested_types)
    return found


def _java_index(
    pool: descriptor_pool.DescriptorPool, files: list[descriptor_pb2.FileDescriptorProto]
) -> dict[str, str]:
    """Java class name -> full proto name; names claimed by two messages are left out."""
    claims: dict[str, set[str]] = {}
    for proto in files:
        for message in _messages_of(pool, proto):
            if message.GetOptions().map_entry:
                continue  # protoc makes no class for a map's entries
            for alias in java_names(proto, message.full_name):
                claims.setdefault(alias, set()).add(message.full_name)
    return {alias: next(iter(names)) for alias, names in claims.items() if len(names) == 1}


def _simple_index(full_names: list[str]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for full in full_names:
        index.setdefault(full.rsplit(".", 1)[-1], []).append(full)
    return index


def field_tree(descriptor: Descriptor, _seen: tuple[str, ...] = ()) -> list[FieldInfo]:
    """The fields of ``descriptor``; a message nested in itself is shown without children."""
    seen = (*_seen, descriptor.full_name)
    return [_field_info(f, seen) for f in descriptor.fields]


def _field_info(fd: FieldDescriptor, seen: tuple[str, ...]) -> FieldInfo:
    info = FieldInfo(fd.name, fd.number, _TYPE_NAMES[fd.type], "scalar", fd.is_repeated)
    if fd.enum_type is not None:
        info.type, info.kind = fd.enum_type.full_name, "enum"
        info.enum_values = [v.name for v in fd.enum_type.values]
    elif fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        key, value = (_field_info(f, seen) for f in fd.message_type.fields)
        info.type, info.kind, info.repeated = f"map<{key.type}, {value.type}>", "map", False
        info.children = [key, value]
    elif fd.message_type is not None:
        info.type, info.kind = fd.message_type.full_name, "message"
        name = fd.message_type.full_name
        if name not in seen and not name.startswith(WELL_KNOWN):
            info.children = field_tree(fd.message_type, seen)
    return info


def java_names(proto: descriptor_pb2.FileDescriptorProto, full_name: str) -> list[str]:
    """The Java class names protoc gives ``full_name`` (binary ``$`` and canonical ``.``
    forms), plus the outer-class forms users also write."""
    options = proto.options
    package = options.java_package or proto.package
    prefix = f"{package}." if package else ""
    nested = full_name[len(proto.package) + 1 :] if proto.package else full_name
    outer = f"{_outer_class(proto)}."
    names = {
        prefix + nested,
        prefix + nested.replace(".", "$"),
        prefix + outer + nested,
        prefix + (outer + nested).replace(".", "$"),
    }
    if not options.java_multiple_files:
        names -= {prefix + nested, prefix + nested.replace(".", "$")}
    return sorted(names)


def _outer_class(proto: descriptor_pb2.FileDescriptorProto) -> str:
    """protoc's Java outer class: ``java_outer_classname`` or the camel-cased file name,
    with ``OuterClass`` appended when a top-level type has the same name."""
    if proto.options.java_outer_classname:
        return proto.options.java_outer_classname
    base = proto.name.rsplit("/", 1)[-1].removesuffix(".proto")
    name, upper_next = "", True
    for char in base:
        if char.isalpha():
            name += char.upper() if upper_next else char
            upper_next = False
        elif char.isdigit():
            name, upper_next = name + char, True
        else:
            upper_next = True
    return f"{name}OuterClass" if name in _type_names(proto) else name


def _type_names(proto: descriptor_pb2.FileDescriptorProto) -> set[str]:
    """Names of every message, enum and service in the file, nested ones included."""
    names = {e.name for e in proto.enum_type} | {s.name for s in proto.service}
    pending = list(proto.message_type)
    while pending:
        message = pending.pop()
        names |= {message.name} | {e.name for e in message.enum_type}
        pending.extend(message.nested_type)
    return names
