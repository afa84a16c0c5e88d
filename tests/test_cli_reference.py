"""docs/cli.md is what the argparse parsers say, whatever the terminal's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli.main import build_parser
from workbench.cli.reference import REGENERATE, commands, render

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "cli.md"


def test_the_cli_page_is_what_the_parsers_say():
    assert PAGE.read_text() == render(), f"docs/cli.md is stale: run `{REGENERATE}`"


def test_every_command_and_subcommand_has_a_section_with_its_usage(monkeypatch):
    monkeypatch.setenv("COLUMNS", "20")  # a narrow terminal changes nothing
    page = render()
    assert page == PAGE.read_text(), f"docs/cli.md is stale: run `{REGENERATE}`"
    for parser, summary in commands(build_parser()):
        section = page.split(f"`{parser.prog}`\n\n", 1)[1].split("\n#", 1)[0]
        assert f"usage: {parser.prog}" in section
        assert summary in section
        assert summary or parser.prog == "workbench", f"{parser.prog}: no help= for its section"


def test_the_readme_and_docs_link_the_cli_page_and_hold_no_command_table():
    readme = (ROOT / "README.md").read_text()
    assert "(docs/cli.md)" in readme
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        rows = [line for line in page.read_text().splitlines() if line.startswith("| `workbench ")]
        assert not rows, f"{page.name}: a hand-written CLI table row; link docs/cli.md instead"
