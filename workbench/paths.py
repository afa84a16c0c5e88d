"""Where the workbench keeps what it builds and fetches (jars, descriptor sets, state).

``WORKBENCH_HOME`` overrides the default: ``.workbench`` in a source checkout,
otherwise ``~/.cache/dagger-workbench``.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def home() -> Path:
    env = os.environ.get("WORKBENCH_HOME")
    if env:
        path = Path(env).expanduser()
    elif (PACKAGE_DIR.parent / "pyproject.toml").exists():
        path = PACKAGE_DIR.parent / ".workbench"
    else:
        path = Path.home() / ".cache" / "dagger-workbench"
    path.mkdir(parents=True, exist_ok=True)
    return path


def subdir(name: str) -> Path:
    path = home() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
