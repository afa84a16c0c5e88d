"""Argument types the command groups share: ``--table NAME=PATH`` and ``--sample FILE``."""

from __future__ import annotations

import argparse
import json

from workbench.exceptions import InputFileError, clip
from workbench.userfiles import read_text


def table_arg(value: str) -> tuple[str, str]:
    """``NAME=PATH`` as a (name, path) pair."""
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got '{value}'")
    return name, path


def check_sample(path: str) -> None:
    """A ``--sample`` file exists and is JSON (before Spark starts)."""
    try:
        json.loads(read_text(path, "saved sample", "--sample"))
    except json.JSONDecodeError as err:
        raise InputFileError(
            f"--sample {clip(path)}: not a saved sample (not JSON: {err.msg} at line "
            f"{err.lineno}); save one with Sample.save"
        ) from None
