"""The shipped notebooks are built from code: the files in the repository are current, and
``workbench new`` makes a notebook from the template without overwriting anything."""

from __future__ import annotations

import platform
from pathlib import Path

import nbformat
import pytest
from cli_runner import workbench
from ipykernel.ipkernel import IPythonKernel

from workbench.cli.main import main
from workbench.exceptions import WorkbenchError
from workbench.notebook.scaffold import KERNEL, generated, new

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted(generated(ROOT)), ids=lambda p: p.name)
def test_shipped_notebook_is_current(path):
    nb = generated(ROOT)[path]
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb) + "\n", (
        "regenerate with: python -m workbench.notebook.scaffold"
    )


def test_new_makes_a_parameterised_notebook_and_never_overwrites(tmp_path):
    assert main(["new", "eta-delays", "--dir", str(tmp_path)]) == 0
    nb = nbformat.read(tmp_path / "eta-delays.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec == KERNEL
    # what the kernel reports: JupyterLab has nothing to change, the notebook opens clean
    assert nb.metadata.language_info == {**IPythonKernel.language_info}
    assert nb.metadata.language_info.version == platform.python_version()
    parameters = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(parameters) == 1
    for name in ("streams", "sinks", "bootstrap_servers"):
        assert f"\n{name} = " in "\n" + parameters[0].source
    assert "\nmode = " not in "\n" + parameters[0].source  # no "run" mode: promote runs it
    assert "name = 'eta-delays'" in parameters[0].source
    with pytest.raises(WorkbenchError, match="exists"):
        new("eta-delays", tmp_path)


def test_a_new_daggers_streams_read_with_its_own_consumer_group(tmp_path):
    """The template's streams once kept the surge example's ``dagger-surge-pricing``
    group: every new dagger shared that example's consumer group."""
    assert main(["new", "eta-delays", "--dir", str(tmp_path)]) == 0
    nb = nbformat.read(tmp_path / "eta-delays.ipynb", as_version=4)
    [parameters] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert '"group_id": "dagger-eta-delays"' in parameters.source
    assert "surge-pricing" not in parameters.source


@pytest.mark.parametrize("name", ["bad name!", "9lives", "a/b", "x" * 64, ""])
def test_new_refuses_a_name_that_is_not_a_dagger_name_in_one_line(name, tmp_path):
    done = workbench("new", name, "--dir", tmp_path)
    assert done.returncode == 1 and list(tmp_path.iterdir()) == []
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a dagger name" in lines[0], done.stderr
