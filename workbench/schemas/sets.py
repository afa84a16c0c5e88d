"""A schema set named on the command line: a folder of ``.proto`` files, a ``.desc``/``.pb``
descriptor set, or a registry version (``@3``, ``registry@3``, ``@latest``, ``@bundled``).

:func:`load` answers the ``FileDescriptorSet`` with source info (folders are compiled with
it; a descriptor set has it when protoc was given ``--include_source_info``) and the prefix
to show before its file names.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf.descriptor_pb2 import FileDescriptorSet

from workbench.exceptions import SchemaError, SchemaVersionError
from workbench.schemas.compiler import compile_protos
from workbench.schemas.versions import BUNDLED, SchemaVersions


def load(ref: str, store: SchemaVersions | None = None) -> tuple[FileDescriptorSet, str]:
    """The set ``ref`` names and the prefix of its file names (a folder's path, else '')."""
    name, at, which = ref.partition("@")
    if at and name in ("", "registry") and not Path(ref).exists():
        return _version(which, store or SchemaVersions())
    path = Path(ref).expanduser()
    if path.is_dir():
        return compiled(path), str(ref)
    if path.is_file():
        from workbench.schemas.registry import _read_set

        return _read_set(path), ""
    raise SchemaError(
        f"'{ref}' is neither a folder of .proto files, a .desc/.pb descriptor set nor a "
        "registry version (@N, @latest, @bundled): point to one of those."
    )


def compiled(folder: Path) -> FileDescriptorSet:
    """The ``.proto`` files under ``folder`` compiled with source info."""

    return FileDescriptorSet.FromString(compile_protos([folder], source_info=True).read_bytes())


def bundled() -> FileDescriptorSet:
    """The bundled schemas (plus ``$WORKBENCH_SCHEMAS``'s folders) with source info."""
    from workbench.schemas.registry import default_registry

    merged = FileDescriptorSet()
    for source in default_registry().sources:
        path = Path(source)
        files = compiled(path) if path.is_dir() else load(source)[0]
        known = {f.name for f in merged.file}
        merged.file.extend(f for f in files.file if f.name not in known)
    return merged


def _version(which: str, store: SchemaVersions) -> tuple[FileDescriptorSet, str]:
    if which == BUNDLED:
        return bundled(), ""
    if which == "latest":
        latest = store.latest()
        if latest is None:
            return bundled(), ""
        return store.files(latest.number), ""
    if not which.isdigit():
        raise SchemaVersionError(
            f"'@{which}' is not a schema version: use @N (a number), @latest or @bundled."
        )
    return store.files(int(which)), ""
