"""The workbench CLI as a user runs it: a fresh Python process, output captured."""

from __future__ import annotations

import subprocess
import sys


def workbench(*args: object, timeout: float = 600) -> subprocess.CompletedProcess:
    """``workbench ARGS...`` in a new process (the code under test, not an installed copy)."""
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
