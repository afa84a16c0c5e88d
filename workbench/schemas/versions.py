"""Published schema versions: the registry's history (``workbench schemas publish``).

Each publish of a folder of ``.proto`` files or a descriptor set records version N+1 in
``<home>/schema-versions``: ``vN.desc`` (the whole set, compiled with source info, so
``schemas check`` can name lines) and a row of ``versions.json`` (number, content hash,
time, who, note, source). The hash is the sha256 of the set without source info: publishing
an unchanged set records nothing and answers the version that has it.

``bundled`` is the schema set shipped with the workbench plus ``$WORKBENCH_SCHEMAS``
(:func:`~workbench.schemas.registry.default_registry`): what a job without a pinned
version decodes with, and what the first published version is compared with.
"""

from __future__ import annotations

import fcntl
import getpass
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.protobuf.descriptor_pb2 import FileDescriptorSet

from workbench.exceptions import SchemaVersionError
from workbench.paths import subdir

BUNDLED = "bundled"
INDEX = "versions.json"


@dataclass(frozen=True)
class SchemaVersion:
    """One published version (``number`` from 1)."""

    number: int
    sha256: str
    created_at: str
    author: str
    note: str
    source: str
    #: the breaking changes from the version before, published with ``--allow-breaking``
    breaking: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def content_hash(files: FileDescriptorSet) -> str:
    """sha256 of ``files`` without source info (comments and layout do not count)."""
    bare = FileDescriptorSet()
    bare.CopyFrom(files)
    for proto in bare.file:
        proto.ClearField("source_code_info")
    return hashlib.sha256(bare.SerializeToString(deterministic=True)).hexdigest()


class SchemaVersions:
    """The published versions kept in ``folder`` (``<home>/schema-versions`` by default)."""

    def __init__(self, folder: Path | None = None):
        self.folder = folder or subdir("schema-versions")

    def list(self) -> list[SchemaVersion]:
        path = self.folder / INDEX
        rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
        return [SchemaVersion(**row) for row in rows]

    def latest(self) -> SchemaVersion | None:
        found = self.list()
        return found[-1] if found else None

    def get(self, number: int) -> SchemaVersion:
        for found in self.list():
            if found.number == number:
                return found
        known = ", ".join(str(v.number) for v in self.list()) or "none yet"
        raise SchemaVersionError(
            f"There is no schema version {number} (published: {known}); list them with "
            "`workbench schemas versions`, publish one with `workbench schemas publish`."
        )

    def path(self, number: int) -> Path:
        """The descriptor set file of version ``number``."""
        self.get(number)
        path = self.folder / f"v{number}.desc"
        if not path.is_file():
            raise SchemaVersionError(
                f"Schema version {number}'s descriptor set {path} is missing: restore it "
                "from a backup, or edit the jobs pinned to it onto another --schema-version."
            )
        return path

    def files(self, number: int) -> FileDescriptorSet:
        return FileDescriptorSet.FromString(self.path(number).read_bytes())

    def publish(
        self,
        files: FileDescriptorSet,
        source: str,
        note: str = "",
        author: str | None = None,
        breaking: Sequence[str] = (),
    ) -> tuple[SchemaVersion, bool]:
        """Record ``files`` as the next version; (the version, whether it is new): a set
        equal to the latest one's is not recorded again. No compatibility check here
        (:func:`workbench.schemas.publishing.publish` checks)."""
        digest = content_hash(files)
        with self._locked():
            found = self.list()
            if found and found[-1].sha256 == digest:
                return found[-1], False
            number = found[-1].number + 1 if found else 1
            record = SchemaVersion(
                number, digest, _now(), author or _user(), note, source, list(breaking)
            )  # fmt: skip
            _write(self.folder / f"v{number}.desc", files.SerializeToString(deterministic=True))
            rows = [v.to_dict() for v in (*found, record)]
            _write(self.folder / INDEX, (json.dumps(rows, indent=1) + "\n").encode())
            return record, True

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.folder / f"{INDEX}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
