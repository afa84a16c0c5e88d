"""Packages from the npm registry, fetched once into the project-local folder.

``npm pack NAME@VERSION`` downloads the package's tarball (no install, no scripts run);
:func:`package_file` pulls one file out of it. Both are idempotent: a tarball or file
already there is used as it is, so ``workbench setup`` is quick the second time.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.paths import subdir

TIMEOUT_S = 300.0


def npm_folder() -> Path:
    """Where fetched npm tarballs and the files taken from them live (``.workbench/npm``)."""
    return subdir("npm")


def pack(name: str, version: str, dest: Path | None = None) -> Path:
    """The tarball of ``name@version`` (an exact version), fetched with ``npm pack`` if missing."""
    folder = dest or npm_folder()
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    if tarball.exists():
        return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError(
            f"Fetching {name}@{version} needs npm, which is not installed: "
            "apt-get install npm (or install Node.js)."
        )
    command = [npm, "pack", f"{name}@{version}", "--pack-destination", str(folder), "--silent"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        raise SetupError(f"npm pack {name}@{version} gave no answer in {TIMEOUT_S:.0f}s.") from err
    if done.returncode != 0 or not tarball.exists():
        detail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SetupError(
            f"npm pack {name}@{version} failed: {' '.join(detail) or 'no output'}. "
            "Is the npm registry reachable (npm config get registry)?"
        )
    return tarball


def package_file(name: str, version: str, member: str, dest: Path | None = None) -> Path:
    """One file of the package (``member`` relative to its root, e.g. ``dist/x.css``)."""
    folder = (dest or npm_folder()) / f"{name.lstrip('@').replace('/', '-')}-{version}"
    target = folder / member
    if target.exists():
        return target
    data = read_member(name, version, member, dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def read_member(name: str, version: str, member: str, dest: Path | None = None) -> bytes:
    """The bytes of one file of the package, read from its tarball (nothing extracted):
    for large data files that are only converted once."""
    tarball = pack(name, version, dest)
    with tarfile.open(tarball) as archive:
        try:
            source = archive.extractfile(f"package/{member}")
        except KeyError:
            source = None
        if source is None:
            raise SetupError(f"{name}@{version} has no file '{member}'.")
        return source.read()
