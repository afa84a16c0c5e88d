"""Publishing a schema set as the registry's next version, checked against the latest.

``workbench schemas publish`` (locally) and ``POST schemas/versions`` (the job service)
both call :func:`publish`: the set is compared with the latest published version
(:mod:`workbench.schemas.compat`, every message); a breaking change refuses it with the
list (:class:`~workbench.exceptions.SchemaPublishError`) unless ``allow_breaking``, and
then the breaking changes are kept in the version's record (``breaking``). The first
version has nothing to be compared with. :func:`listing` is what ``schemas versions``
shows: each version with the messages its set holds.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor_pb2 import FileDescriptorSet

from workbench.exceptions import SchemaPublishError
from workbench.schemas.versions import SchemaVersion, SchemaVersions


def publish(
    store: SchemaVersions,
    files: FileDescriptorSet,
    source: str,
    note: str = "",
    author: str | None = None,
    allow_breaking: bool = False,
) -> tuple[SchemaVersion, bool]:
    """Record ``files`` as the next version: (the version, whether it is new)."""
    from workbench.schemas import compat

    latest = store.latest()
    bad = []
    if latest is not None:
        bad = compat.breaking(compat.compare(store.files(latest.number), files))
    if bad and not allow_breaking:
        raise SchemaPublishError(latest.number if latest else 0, bad)
    breaking = [c.render() for c in bad]
    return store.publish(files, source, note=note, author=author, breaking=breaking)


def messages(files: FileDescriptorSet) -> list[str]:
    """Full names of the set's top-level messages (no ``google.protobuf`` ones)."""
    found = []
    for proto in files.file:
        prefix = f"{proto.package}." if proto.package else ""
        found += [prefix + m.name for m in proto.message_type]
    return sorted(n for n in found if not n.startswith("google.protobuf."))


def listing(store: SchemaVersions) -> list[dict[str, Any]]:
    """Every published version as a dict, with ``messages``."""
    return [{**v.to_dict(), "messages": messages(store.files(v.number))} for v in store.list()]
