"""The "Dagger Workbench (PySpark)" Jupyter kernel: its spec, and installing it.

The kernel is IPython (``python -m ipykernel_launcher``, with the interpreter that installs
it) started with ``--ext=workbench.notebook``: the workbench's magics are loaded and Spark
starts at once in a background thread (:func:`workbench.notebook.start_spark`; the first
use waits for it), with the workbench's jars and UDFs, on ``$WORKBENCH_SPARK_MASTER``
(default ``local[2]``). The template is
``kernels/dagger-workbench/`` in the source tree, package data in the wheel
(:func:`workbench.paths.shipped`); the name is always
:data:`KERNEL_NAME`, so papermill can run notebooks with ``-k dagger-workbench``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.paths import shipped
from workbench.settings import env_var, variable

KERNEL_NAME = "dagger-workbench"
DISPLAY_NAME = "Dagger Workbench (PySpark)"
#: Settings a kernel inherits from the installing shell when they are set there.
INHERITED_ENV = tuple(variable(s) for s in ("home", "spark_master", "spark_log", "java_home"))


def kernel_spec(
    python: str | None = None, master: str | None = None, env: Mapping[str, str] | None = None
) -> dict:
    """The kernel.json for ``python`` (default: this interpreter)."""
    template = shipped(f"kernels/{KERNEL_NAME}/kernel.json")
    spec = json.loads(template.read_text(encoding="utf-8"))
    python = python or sys.executable
    spec["argv"] = [python if arg == "{python}" else arg for arg in spec["argv"]]
    inherited = {k: v for k in INHERITED_ENV if (v := env_var(k))}
    spec["env"] = {**spec.get("env", {}), **inherited, **(env or {})}
    if master:
        spec["env"][variable("spark_master")] = master
    return spec


def install(
    *,
    user: bool = False,
    prefix: str | Path | None = None,
    master: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Install the kernel spec: for this user, under ``prefix``, or (default) into this
    environment's prefix (``--sys-prefix``). Returns the installed folder."""
    from jupyter_client.kernelspec import KernelSpecManager

    if user and prefix is not None:
        raise SetupError("give --user or a prefix, not both")
    target = None if user else str(prefix if prefix is not None else sys.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / KERNEL_NAME
        shutil.copytree(shipped(f"kernels/{KERNEL_NAME}"), folder)
        spec = kernel_spec(master=master, env=env)
        (folder / "kernel.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
        where = KernelSpecManager().install_kernel_spec(
            str(folder), KERNEL_NAME, user=user, prefix=target
        )
    return Path(where)
