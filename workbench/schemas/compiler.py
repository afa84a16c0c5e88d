"""Compile folders of ``.proto`` files into a serialized ``FileDescriptorSet``.

protoc is the one bundled with ``grpcio-tools`` (no system install needed), run as
``python -m grpc_tools.protoc`` so its diagnostics can be captured. The
``google/protobuf/*.proto`` well-known types come from grpc_tools' own include
folder. Outputs are cached under ``<home>/schemas`` keyed by a hash of the sources,
so an unchanged folder is compiled once.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from workbench.exceptions import SchemaError
from workbench.paths import subdir

_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+\.proto):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")


@dataclass(frozen=True)
class Problem:
    """One protoc diagnostic: the file as protoc names it, 1-based line and column, text."""

    file: str
    line: int
    column: int
    message: str


class ProtoCompileError(SchemaError):
    """protoc rejected the sources; ``problems`` holds the diagnostics it could locate."""

    def __init__(self, message: str, problems: list[Problem]):
        self.problems = problems
        super().__init__(message)


def well_known_include() -> Path:
    """The folder holding ``google/protobuf/*.proto`` as shipped with grpcio-tools."""
    return Path(str(resources.files("grpc_tools") / "_proto"))


def proto_files(folder: Path) -> list[str]:
    """The ``.proto`` files under ``folder``, as paths relative to it (how imports name them)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.proto"))


def compile_protos(folders: Iterable[str | Path], source_info: bool = False) -> Path:
    """A ``.desc`` file holding every ``.proto`` under ``folders`` plus all their imports.

    Each folder is an include root: ``import "a/b.proto"`` resolves against every folder
    given and against the well-known types. ``source_info``: keep each declaration's file
    position (``SourceCodeInfo``, what :mod:`workbench.schemas.compat` reports lines from).
    Raises :class:`ProtoCompileError` with protoc's ``file:line:col`` diagnostics when the
    sources do not compile.
    """
    roots = list(dict.fromkeys(_checked_folder(f) for f in folders))
    sources = [(root, rel) for root in roots for rel in proto_files(root)]
    _reject_shadowed(sources)
    if not sources:
        where = ", ".join(str(r) for r in roots) or "(no folder given)"
        raise SchemaError(f"No .proto files found in {where}: point to a folder of .proto files.")
    kind = "protoc-src" if source_info else "protoc"
    out = subdir("schemas") / f"{kind}-{_digest(sources)}.desc"
    if not out.exists():
        extra = ["--include_source_info"] if source_info else []
        _run_protoc(roots, [*extra, *(rel for _, rel in sources)], out)
    return out


def _checked_folder(folder: str | Path) -> Path:
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise SchemaError(f"Schema folder '{folder}' does not exist: give a folder of .proto.")
    return path


def _reject_shadowed(sources: list[tuple[Path, str]]) -> None:
    seen: dict[str, Path] = {}
    for root, rel in sources:
        if rel in seen:
            raise SchemaError(
                f"'{rel}' is in both {seen[rel]} and {root}; imports could not tell "
                "them apart: rename or remove one of them."
            )
        seen[rel] = root


def _digest(sources: list[tuple[Path, str]]) -> str:
    """What the output depends on: protoc's version and each file's import path and text
    (not the folders: the same files anywhere give the same descriptor set)."""
    h = hashlib.sha256(f"grpcio-tools {_tools_version()}".encode())
    for root, rel in sources:
        h.update(f"\0{rel}\0".encode())
        h.update((root / rel).read_bytes())
    return h.hexdigest()[:24]


def _tools_version() -> str:
    from importlib.metadata import version

    return version("grpcio-tools")


def _run_protoc(roots: list[Path], files: list[str], out: Path) -> None:
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    includes = [f"-I{root}" for root in roots] + [f"-I{well_known_include()}"]
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        *includes,
        f"--descriptor_set_out={tmp}",
        "--include_imports",
        *files,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise _compile_error(proc.stderr or proc.stdout, roots)
    tmp.replace(out)


def _compile_error(output: str, roots: list[Path]) -> ProtoCompileError:
    problems = [
        Problem(m["file"], int(m["line"]), int(m["col"]), m["msg"])
        for m in map(_DIAGNOSTIC.match, output.splitlines())
        if m
    ]
    where = ", ".join(str(r) for r in roots)
    detail = output.strip() or "protoc failed without a message"
    return ProtoCompileError(
        f"The .proto files in {where} do not compile; fix the lines protoc names:\n{detail}",
        problems,
    )
