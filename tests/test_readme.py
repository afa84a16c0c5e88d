"""The README and the docs tell the truth about the CLI and the UDFs, and stay short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.cli.main import build_parser
from workbench.udfs import UDFS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
SQL_PAGE = (ROOT / "docs" / "sql.md").read_text()
CLI_PAGE = (ROOT / "docs" / "cli.md").read_text()


def test_every_udf_is_documented_with_its_signature():
    missing = [u.signature for u in UDFS if f"`{u.signature}`" not in SQL_PAGE]
    assert not missing


def test_every_cli_command_is_documented():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    missing = [name for name in sub.choices if f"## `workbench {name}`" not in CLI_PAGE]
    assert not missing


def test_quickstart_has_exactly_two_commands():
    quickstart = README.split("## Quickstart")[1].split("```")[1]
    commands = [line for line in quickstart.strip().splitlines() if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["make demo", "make test"]


def test_the_analysts_door_is_make_lab_and_names_a_notebook_that_exists():
    door = README.split("## The analyst's door")[1].split("\n## ")[0]
    commands = [line.split("#")[0].strip() for line in door.split("```")[1].splitlines()]
    assert [c for c in commands if c] == ["make lab"]
    notebooks = re.findall(r"`notebooks/([\w.]+\.ipynb)`", door)
    assert notebooks and all((ROOT / "notebooks" / n).is_file() for n in notebooks)


def test_the_readme_and_benchmarks_page_are_short_and_no_table_cell_is_a_page():
    assert len(README.splitlines()) <= 250
    assert len((ROOT / "docs" / "benchmarks.md").read_text().splitlines()) <= 250
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        rows = [line for line in page.read_text().splitlines() if line.startswith("|")]
        cells = [c.strip() for row in rows for c in re.split(r"(?<!\\)\|", row.strip("|"))]
        longest = max(cells, key=len, default="")
        assert len(longest) < 1000, f"{page.name}: a {len(longest)}-character table cell"
