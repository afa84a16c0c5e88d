"""The CLI reference, ``docs/cli.md``, rendered from the argparse parsers.

Regenerate with ``python -m workbench.cli.reference > docs/cli.md``; ``tests/cli/test_reference.py``
fails when the page and the parsers differ. Usage lines are formatted at a fixed width, so the
text does not depend on the terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

WIDTH = 100
REGENERATE = "python -m workbench.cli.reference > docs/cli.md"

HEADER = f"""\
# CLI reference

[Back to the README](../README.md)

Generated from the `workbench` command's parsers; do not edit by hand. Regenerate with
`{REGENERATE}`.

Every command also answers `--help`. Errors print one message on stderr and exit 1.
Spark's own output (JVM start-up lines, warnings, Java stacks) goes to
`$WORKBENCH_HOME/logs/spark-cli.log`, not the terminal (`run --verbose` keeps it on stderr).
"""


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def commands(
    parser: argparse.ArgumentParser, summary: str = ""
) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    """Every parser under ``parser`` (itself first), depth first in the order they were
    added, each with the one-line help its parent lists it with."""
    yield parser, summary
    sub = _subparsers(parser)
    if sub is None:
        return
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    for name, child in sub.choices.items():
        yield from commands(child, helps.get(name, ""))


def usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _names(action: argparse.Action) -> str:
    if action.option_strings:
        metavar = "" if action.nargs == 0 else " " + _metavar(action)
        return ", ".join(f"`{o}{metavar}`" for o in action.option_strings)
    return f"`{_metavar(action)}`"


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    if action.metavar is not None:
        return action.metavar
    if action.choices is not None and not action.option_strings:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        text = text % {**vars(action), "prog": prog}
    default = action.default
    shown = isinstance(default, int | float | str) and not isinstance(default, bool)
    if shown and default not in ("", argparse.SUPPRESS) and str(default) not in text:
        text = f"{text} (default: `{default}`)" if text else f"default: `{default}`"
    return " ".join(text.split())


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    lines = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            names = ", ".join(f"`{n}`" for n in action.choices)
            lines.append(f"- `{_metavar(action)}`: one of {names}")
            continue
        text = _help(action, parser.prog)
        lines.append(f"- {_names(action)}" + (f": {text}" if text else ""))
    return lines


def section(parser: argparse.ArgumentParser, summary: str) -> str:
    depth = max(2, min(parser.prog.count(" ") + 1, 4))
    parts = [f"{'#' * depth} `{parser.prog}`", ""]
    description = " ".join((parser.description or "").split())
    for text in dict.fromkeys(t for t in (summary, description) if t):
        parts += [text, ""]
    parts += ["```", usage(parser), "```", ""]
    arguments = _arguments(parser)
    if arguments:
        parts += [*arguments, ""]
    return "\n".join(parts)


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole page: the header, then one section per command and subcommand."""
    if parser is None:
        from workbench.cli.main import build_parser

        parser = build_parser()
    sections = [section(p, summary) for p, summary in commands(parser)]
    return "\n".join([HEADER, *sections]).rstrip("\n") + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
