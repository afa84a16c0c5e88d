"""YAML files as users hand them to us: read safely, with what they may expand to capped.

PyYAML builds an alias as a shared reference, so a "billion laughs" document loads fast
yet is astronomically large once anything walks it (validation, error messages). A file
here may hold at most :data:`MAX_ALIASES` aliases and expand to at most
:data:`MAX_NODES` values, and must be UTF-8 text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from workbench.exceptions import InputFileError, SpecError, clip
from workbench.userfiles import read_text

MAX_ALIASES = 100
MAX_NODES = 100_000


class _CountingLoader(yaml.SafeLoader):
    """A safe loader that refuses more than :data:`MAX_ALIASES` aliases."""

    aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _TooLarge(f"more than {MAX_ALIASES} YAML aliases (*name)")
        return super().compose_node(parent, index)


class _TooLarge(Exception):
    pass


def read_yaml(path: str | Path, what: str = "spec") -> Any:
    """The data in the YAML file at ``path``; a :class:`SpecError` naming the file when
    it is missing, a folder, not UTF-8, not YAML, or too large once aliases expand."""
    path = Path(path)
    return load_text(_read_text(path, what), str(path))


def load_text(text: str, source: str | None = None) -> Any:
    """The data in YAML ``text`` (the same caps as :func:`read_yaml`); a
    :class:`SpecError` naming ``source`` when it is not YAML or too large."""
    loader = _CountingLoader(text)
    try:
        data = loader.get_single_data()
        if expanded_size(data) > MAX_NODES:
            raise _TooLarge(f"it expands to more than {MAX_NODES:,} values")
    except _TooLarge as err:
        raise SpecError("(file)", f"too large: {err}; write the values out", source) from None
    except yaml.YAMLError as err:
        raise SpecError("(file)", f"not valid YAML: {_yaml_problem(err)}", source) from None
    finally:
        loader.dispose()
    return data


def _read_text(path: Path, what: str) -> str:
    try:
        return read_text(path, what)
    except InputFileError as err:
        reason = str(err).partition(": ")[2]
        raise SpecError("(file)", reason, str(path)) from None


def _yaml_problem(err: yaml.YAMLError) -> str:
    """PyYAML's reason and position, without the (possibly huge) line it quotes."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{clip(problem)}{where}"


def expanded_size(data: Any) -> int:
    """How many values ``data`` holds with every shared reference counted each time."""
    memo: dict[int, int] = {}

    def size(value: Any) -> int:
        key = id(value)
        if key in memo:
            return memo[key]
        memo[key] = MAX_NODES + 1  # a value that contains itself is too large
        if isinstance(value, dict):
            total = 1 + sum(size(k) + size(v) for k, v in value.items())
        elif isinstance(value, list):
            total = 1 + sum(size(v) for v in value)
        else:
            total = 1
        memo[key] = total
        return total

    return size(data)


def key_line(text: str, key: str) -> int | None:
    """The 1-based line in YAML ``text`` where the value of a spec key path such as
    ``alerts[0].when`` starts (None when the text does not hold it)."""
    import re

    try:
        node = yaml.compose(text, Loader=_CountingLoader)
    except (yaml.YAMLError, _TooLarge):
        return None
    for part in re.findall(r"[^.\[\]]+", key):
        node = _child(node, part)
    return None if node is None else node.start_mark.line + 1


def _child(node: Any, part: str) -> Any:
    if node is None:
        return None
    if isinstance(node, yaml.SequenceNode) and part.isdigit():
        return node.value[int(part)] if int(part) < len(node.value) else None
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if getattr(k, "value", None) == part), None)
    return None
