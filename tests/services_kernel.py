"""The workbench kernel for papermill: installed once into a temporary prefix that Jupyter
searches first (``JUPYTER_PATH``), so the tests never touch the user's kernels."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def workbench_kernel(tmp_path_factory):
    """The kernel's name, installed for this session."""
    from workbench.lab.kernel import KERNEL_NAME, install

    prefix = tmp_path_factory.mktemp("kernel-prefix")
    install(prefix=prefix)
    before = os.environ.get("JUPYTER_PATH")
    here = str(prefix / "share" / "jupyter")
    os.environ["JUPYTER_PATH"] = here if not before else f"{here}{os.pathsep}{before}"
    yield KERNEL_NAME
    if before is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = before
