"""Files named on the command line: read as UTF-8 text, or checked writable before a run.

Each problem is one :class:`~workbench.exceptions.InputFileError` naming the flag, the
path and what to do, so a missing ``--sql`` file or an unwritable ``--out`` is reported
before Spark starts.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.exceptions import InputFileError, clip

MAX_TEXT_BYTES = 5_000_000


def read_text(path: str | Path, what: str, flag: str = "") -> str:
    """The UTF-8 text of the file ``path`` (a ``what``, given with ``flag``)."""
    path = Path(path)
    name = _name(path, flag)
    if not path.exists():
        raise InputFileError(f"{name}: no such file; give an existing {what} file")
    if path.is_dir():
        raise InputFileError(f"{name}: is a folder; give the {what} file in it")
    if path.stat().st_size > MAX_TEXT_BYTES:
        raise InputFileError(f"{name}: larger than {MAX_TEXT_BYTES:,} bytes; is it a {what}?")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputFileError(
            f"{name}: not UTF-8 text (byte {err.start}); save the {what} as UTF-8"
        ) from None
    except OSError as err:
        raise InputFileError(f"{name}: cannot be read ({err.strerror})") from None


def writable(path: str | Path, flag: str = "") -> Path:
    """``path`` if a file can be written there (its folder is made); else the reason."""
    path = Path(path)
    name = _name(path, flag)
    if path.is_dir():
        raise InputFileError(f"{name}: is a folder; give a file name")
    folder = path.parent
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise InputFileError(f"{name}: '{clip(existing)}' is a file, not a folder")
    target = path if path.exists() else existing
    if not os.access(target, os.W_OK):
        raise InputFileError(f"{name}: not writable; choose a path you can write")
    folder.mkdir(parents=True, exist_ok=True)
    return path


def _name(path: Path, flag: str) -> str:
    return f"{flag} {clip(path)}" if flag else clip(path)
