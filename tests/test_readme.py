"""The README tells the truth about the CLI and the UDFs."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli.main import build_parser
from workbench.udfs import UDFS

pytestmark = pytest.mark.unit

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_every_udf_is_documented_with_its_signature():
    missing = [u.signature for u in UDFS if f"`{u.signature}`" not in README]
    assert not missing


def test_every_cli_command_is_documented():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    missing = [name for name in sub.choices if f"`workbench {name}" not in README]
    assert not missing


def test_quickstart_has_exactly_two_commands():
    quickstart = README.split("## Quickstart")[1].split("```")[1]
    commands = [line for line in quickstart.strip().splitlines() if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]
