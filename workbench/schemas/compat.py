"""Breaking changes between two versions of a schema set (``workbench schemas check``).

:func:`compare` takes two ``FileDescriptorSet`` s (compiled with source info, so every
change is named at a file and line) and lists what changed, each a :class:`Change`:

Breaking (a reader built for one version misreads data of the other, or a dagger's
decoded columns change):
- ``field-removed``: a field's number is gone and not ``reserved`` (a later field could
  reuse it); ``field-number-reused``: a number now names another field of another type;
  ``reserved-number-reused`` / ``reserved-name-reused``: a new field takes what the old
  version reserved;
- ``field-type-changed``: same number and name, another type (also between wire-compatible
  scalars such as int32/int64: Spark's ``from_protobuf`` types the column from the
  descriptor, so a dagger's column type changes);
- ``field-label-changed``: repeated, required, optional (proto2 or proto3 ``optional``)
  and proto3's implicit presence are four labels; any change between them;
  ``field-oneof-changed``: a field moved into, out of or between ``oneof`` s (setting it
  clears another field, or no longer does);
- ``enum-value-removed``, ``enum-value-number-reused`` (a number now has another name:
  Spark decodes enums to their names, so stored values change), ``enum-reserved-reused``;
- ``message-removed``, ``enum-removed``.

Compatible (listed as notes; exit 0): new fields, messages, enums and enum values; a
removed field or value whose number (and name) is reserved; a field renamed with the same
number and type (the wire format has no names; a dagger whose SQL names the old name must
be edited, which validating the spec says).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
    FileDescriptorSet,
)

WELL_KNOWN = "google/protobuf/"
# FileDescriptorProto / DescriptorProto field numbers, as SourceCodeInfo paths use them
FILE_MESSAGES, FILE_ENUMS, MESSAGE_FIELDS, MESSAGE_NESTED, MESSAGE_ENUMS, ENUM_VALUES = (
    4,
    5,
    2,
    3,
    4,
    2,
)
_SCALARS = {v: k[5:].lower() for k, v in FieldDescriptorProto.Type.items() if k.startswith("TYPE_")}


@dataclass(frozen=True)
class Change:
    """One difference: where (``file``:``line``, in the new version unless the thing is
    gone from it), its ``kind``, the message or enum it is in (``owner``), what changed and
    what to do."""

    kind: str
    owner: str
    file: str
    line: int
    detail: str
    advice: str = ""
    breaking: bool = True

    def render(self) -> str:
        todo = f"; {self.advice}" if self.advice else ""
        return f"{self.file}:{self.line}: {self.kind}: {self.detail}{todo}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Decl:
    """A message or enum of one version: its proto, file, SourceCodeInfo path and lines."""

    proto: Any  # DescriptorProto | EnumDescriptorProto
    file: FileDescriptorProto
    path: tuple[int, ...]
    where: str
    lines: dict[tuple[int, ...], int] = field(repr=False)

    def line(self, *sub: int) -> int:
        """1-based line of this declaration's element at ``sub`` (0 when unknown)."""
        return self.lines.get(self.path + sub) or self.lines.get(self.path, 0)

    @property
    def proto3(self) -> bool:
        return self.file.syntax == "proto3"


class Side:
    """One version: every message and enum by full name (``google/protobuf`` left out)."""

    def __init__(self, files: FileDescriptorSet, root: str = ""):
        self.messages: dict[str, Decl] = {}
        self.enums: dict[str, Decl] = {}
        for proto in files.file:
            if not proto.name.startswith(WELL_KNOWN):
                self._add_file(proto, f"{root.rstrip('/')}/{proto.name}" if root else proto.name)

    def _add_file(self, proto: FileDescriptorProto, where: str) -> None:
        lines = {tuple(loc.path): loc.span[0] + 1 for loc in proto.source_code_info.location}
        prefix = f"{proto.package}." if proto.package else ""
        for i, message in enumerate(proto.message_type):
            self._add_message(message, prefix, proto, (FILE_MESSAGES, i), where, lines)
        for i, enum in enumerate(proto.enum_type):
            self.enums[prefix + enum.name] = Decl(enum, proto, (FILE_ENUMS, i), where, lines)

    def _add_message(self, message, prefix, proto, path, where, lines) -> None:  # type: ignore[no-untyped-def]
        name = prefix + message.name
        self.messages[name] = Decl(message, proto, path, where, lines)
        for i, nested in enumerate(message.nested_type):
            self._add_message(nested, f"{name}.", proto, (*path, MESSAGE_NESTED, i), where, lines)
        for i, enum in enumerate(message.enum_type):
            self.enums[f"{name}.{enum.name}"] = Decl(
                enum, proto, (*path, MESSAGE_ENUMS, i), where, lines
            )

    def type_of(self, f: FieldDescriptorProto) -> str:
        """The field's type as written: ``int64``, ``pkg.Msg``, ``map<string, int32>``."""
        if f.type not in (f.TYPE_MESSAGE, f.TYPE_ENUM):
            return _SCALARS[f.type]
        name = f.type_name.lstrip(".")
        entry = self.messages.get(name)
        if entry is not None and entry.proto.options.map_entry:
            key, value = entry.proto.field
            return f"map<{self.type_of(key)}, {self.type_of(value)}>"
        return name

    def label_of(self, f: FieldDescriptorProto, decl: Decl) -> str:
        if f.label == f.LABEL_REPEATED:
            return "map" if self.type_of(f).startswith("map<") else "repeated"
        if f.label == f.LABEL_REQUIRED:
            return "required"
        if decl.proto3 and not f.proto3_optional:
            return "implicit"
        return "optional"


def compare(old: FileDescriptorSet, new: FileDescriptorSet, roots: tuple[str, str] = ("", "")):
    """Every :class:`Change` from ``old`` to ``new``, in file and line order.
    ``roots``: prefixes for the file names shown (the folders the sets came from)."""
    a, b = Side(old, roots[0]), Side(new, roots[1])
    changes = [*_messages(a, b), *_enums(a, b)]
    return sorted(changes, key=lambda c: (not c.breaking, c.file, c.line, c.kind))


def breaking(changes: Iterable[Change]) -> list[Change]:
    return [c for c in changes if c.breaking]


def reachable(side: Side, roots: Iterable[str]) -> set[str]:
    """Full names of the messages and enums that decoding ``roots`` reads (they included)."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        decl = side.messages.get(name)
        if decl is not None:
            pending += [f.type_name.lstrip(".") for f in decl.proto.field if f.type_name]
    return seen


def _gone_parent(name: str, gone: set[str]) -> bool:
    return any(name.startswith(f"{parent}.") for parent in gone)


def _messages(a: Side, b: Side) -> Iterator[Change]:
    gone = {n for n in a.messages if n not in b.messages}
    for name, decl in a.messages.items():
        if decl.proto.options.map_entry:
            continue  # compared as the map field's type
        if name in gone:
            if not _gone_parent(name, gone):
                yield Change(
                    "message-removed", name, decl.where, decl.line(),
                    f"message {name} was removed",
                    "restore it, or first move every job reading it to another message",
                )  # fmt: skip
            continue
        yield from _fields(name, decl, b.messages[name], a, b)
    for name, decl in b.messages.items():
        if name not in a.messages and not decl.proto.options.map_entry:
            yield _note("message-added", name, decl, decl.line(), f"message {name} added")


def _fields(name: str, old: Decl, new: Decl, a: Side, b: Side) -> Iterator[Change]:
    olds = {f.number: f for f in old.proto.field}
    news = {f.number: (i, f) for i, f in enumerate(new.proto.field)}
    for number, f in olds.items():
        if number in news:
            i, g = news[number]
            before = (a.type_of(f), a.label_of(f, old), _oneof_of(old, f))
            yield from _field_pair(name, f, before, new, i, g, b)
        elif _reserved(new.proto, number):
            yield _note("field-removed-reserved", name, new, new.line(), _said(name, f, "removed"))
        else:
            yield Change(
                "field-removed", name, new.where, new.line(), _said(name, f, "was removed"),
                f"restore it or add `reserved {number}; reserved \"{f.name}\";` to {name}",
            )  # fmt: skip
    for number, (i, g) in news.items():
        if number not in olds:
            yield from _added(name, old, new, i, g)


def _field_pair(name, f, before, new: Decl, i, g, b: Side) -> Iterator[Change]:  # type: ignore[no-untyped-def]
    old_type, old_label, old_oneof = before
    new_type, line = b.type_of(g), new.line(MESSAGE_FIELDS, i)
    if new_type != old_type and g.name != f.name:
        yield Change(
            "field-number-reused", name, new.where, line,
            f"{name}: number {g.number} was `{old_type} {f.name}` and is now "
            f"`{new_type} {g.name}`",
            f"give `{g.name}` an unused number and `reserved {g.number}; "
            f"reserved \"{f.name}\";`",
        )  # fmt: skip
        return
    if new_type != old_type:
        yield Change(
            "field-type-changed", name, new.where, line,
            f"{name}.{g.name} = {g.number} changed type {old_type} -> {new_type}",
            f"keep {old_type} {g.name}; add the new type as a new field with an unused number",
        )  # fmt: skip
    elif g.name != f.name:
        yield _note(
            "field-renamed", name, new, line,
            f"{name}: field {g.number} renamed {f.name} -> {g.name} (wire compatible; SQL "
            f"naming `{f.name}` must change)",
        )  # fmt: skip
    yield from _oneof(name, f, old_oneof, new, line, g)
    new_label = b.label_of(g, new)
    if new_label != old_label and {old_label, new_label} != {"map"}:
        yield Change(
            "field-label-changed", name, new.where, line,
            f"{name}.{g.name} = {g.number} changed from {old_label} to {new_label}",
            f"keep it {old_label}; add a {new_label} field with an unused number instead",
        )  # fmt: skip


def _oneof_of(decl: Decl, f: FieldDescriptorProto) -> str:
    """The real ``oneof`` holding ``f`` ('' for none; proto3 ``optional``'s own does not
    count)."""
    if not f.HasField("oneof_index") or f.proto3_optional:
        return ""
    return str(decl.proto.oneof_decl[f.oneof_index].name)


def _oneof(name: str, f, old_oneof: str, new: Decl, line: int, g) -> Iterator[Change]:  # type: ignore[no-untyped-def]
    new_oneof = _oneof_of(new, g)
    if new_oneof != old_oneof:
        was, now = (f"oneof {o}" if o else "no oneof" for o in (old_oneof, new_oneof))
        yield Change(
            "field-oneof-changed", name, new.where, line,
            f"{name}.{g.name} = {g.number} moved from {was} to {now}",
            f"keep it in {was}; add a new field with an unused number where it should be",
        )  # fmt: skip


def _added(name: str, old: Decl, new: Decl, i: int, g: FieldDescriptorProto) -> Iterator[Change]:
    line = new.line(MESSAGE_FIELDS, i)
    if _reserved(old.proto, g.number):
        yield Change(
            "reserved-number-reused", name, new.where, line,
            _said(name, g, "takes a number the old version reserved"),
            f"give `{g.name}` a number never used in {name}",
        )  # fmt: skip
    elif g.name in old.proto.reserved_name:
        yield Change(
            "reserved-name-reused", name, new.where, line,
            _said(name, g, "takes a name the old version reserved"),
            f"name it differently: `{g.name}` once meant another field",
        )  # fmt: skip
    else:
        yield _note("field-added", name, new, line, _said(name, g, "added"))


def _enums(a: Side, b: Side) -> Iterator[Change]:
    gone = {n for n in a.messages if n not in b.messages}
    for name, decl in a.enums.items():
        other = b.enums.get(name)
        if other is not None:
            yield from _values(name, decl, other)
        elif not _gone_parent(name, gone):
            yield Change(
                "enum-removed", name, decl.where, decl.line(), f"enum {name} was removed",
                "restore it, or first move every field using it to another type",
            )  # fmt: skip


def _values(name: str, old: Decl, new: Decl) -> Iterator[Change]:
    olds: dict[int, set[str]] = {}
    for v in old.proto.value:
        olds.setdefault(v.number, set()).add(v.name)
    news: dict[int, list[tuple[int, str]]] = {}
    for i, v in enumerate(new.proto.value):
        news.setdefault(v.number, []).append((i, v.name))
    for number, names in olds.items():
        shown = "/".join(sorted(names))
        if number not in news:
            if not _enum_reserved(new.proto, number):
                yield Change(
                    "enum-value-removed", name, new.where, new.line(),
                    f"{name}: value {shown} = {number} was removed",
                    f"restore it or add `reserved {number}; reserved \"{shown}\";` to {name}",
                )  # fmt: skip
        elif not names & {n for _, n in news[number]}:
            i, now = news[number][0]
            yield Change(
                "enum-value-number-reused", name, new.where, new.line(ENUM_VALUES, i),
                f"{name}: number {number} was {shown} and is now {now} (jobs decode "
                "enums to their names)",
                f"keep {shown} = {number}; give {now} an unused number",
            )  # fmt: skip
    for number, entries in news.items():
        i, now = entries[0]
        if number in olds:
            continue
        if _enum_reserved(old.proto, number):
            yield Change(
                "enum-reserved-reused", name, new.where, new.line(ENUM_VALUES, i),
                f"{name}: {now} = {number} takes a number the old version reserved",
                f"give {now} a number never used in {name}",
            )  # fmt: skip
        else:
            yield _note(
                "enum-value-added", name, new, new.line(ENUM_VALUES, i), f"{name}: {now} added"
            )


def _reserved(message: DescriptorProto, number: int) -> bool:
    return any(r.start <= number < r.end for r in message.reserved_range)  # end exclusive


def _enum_reserved(enum: EnumDescriptorProto, number: int) -> bool:
    return any(r.start <= number <= r.end for r in enum.reserved_range)  # end inclusive


def _said(owner: str, f: FieldDescriptorProto, what: str) -> str:
    return f"{owner}.{f.name} = {f.number} {what}"


def _note(kind: str, owner: str, decl: Decl, line: int, detail: str) -> Change:
    return Change(kind, owner, decl.where, line, detail, breaking=False)
