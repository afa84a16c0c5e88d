"""The package's shape: no import cycle between any two modules, counting imports inside
functions (grimp sees them; only ``TYPE_CHECKING`` imports are left out), and at most 20
modules directly under ``workbench/``. The layers themselves are import-linter contracts
in pyproject.toml (``lint-imports``, run by ``make check`` and ``make test``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import workbench

pytestmark = pytest.mark.unit

PACKAGE = Path(workbench.__file__).parent


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import graph's cycles: its strongly connected components of two or more modules
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def imported(module: str):
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, imported(root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others():
    graph = grimp.build_graph("workbench", exclude_type_checking_imports=True, cache_dir=None)
    cycles = strongly_connected(graph)
    assert cycles == [], "import cycles (move what is shared down, or pass it in):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles
    )


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    """The check above can fail: two modules importing each other inside functions."""
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from loop import b\n")
    (package / "b.py").write_text("def g():\n    from loop.a import f\n")
    (package / "c.py").write_text("from loop import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("loop", cache_dir=None)
    assert strongly_connected(graph) == [["loop.a", "loop.b"]]


def test_at_most_twenty_modules_at_the_top():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 20, modules


def test_the_architecture_page_shows_the_layers_and_rooms_of_the_code():
    from workbench.dev import architecture

    current = architecture.PAGE.read_text(encoding="utf-8")
    assert architecture.BEGIN in current and architecture.END in current
    assert architecture.page(current) == current, (
        "docs/architecture.md is stale: python -m workbench.dev.architecture rewrites it"
    )
    assert "| 1 | `cli` |" in current  # the contract's top layer, as pyproject.toml has it


def test_every_room_has_a_layer():
    """A package or top-level module missing from the layers contract would be unchecked."""
    from workbench.dev import architecture

    layered = {name for layer in architecture.layers() for name in layer}
    rooms = set(architecture.rooms()) - {"workbench.data"}  # files, no imports
    assert rooms - layered == set(), "add these to [tool.importlinter] layers in pyproject.toml"


#: What ``workbench --help`` must not wait for: the commands import these when they run.
HEAVY = ("pyspark", "pandas", "confluent_kafka", "pydeck", "sqlalchemy", "pydantic", "sqlglot")


def test_the_cli_parser_builds_without_heavy_imports():
    """``workbench --help`` builds every command group's parser; none of them may import a
    heavy module at the top (lazy imports inside the commands are what keep it fast)."""
    probe = (
        "import sys\n"
        "from workbench.cli.main import build_parser\n"
        "build_parser()\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", "imported while building the CLI: " + done.stdout
