"""The wheel alone: built from this checkout, installed with pip into a fresh virtualenv and
run with the working folder outside the checkout, it brings the ``workbench`` CLI, the
prebuilt lab extension, the Jupyter server extension (enabled on install), the kernel spec,
the shipped templates and the demo, which keeps its state in the user's cache folder.

Slow by nature (minutes): building the wheel compiles the lab extension
(hatch-jupyter-builder runs ``jlpm install && jlpm build:prod``), pip installs the
dependencies (PySpark among them) from its cache or PyPI, and the demo starts Spark and a
Kafka broker of its own after fetching their jars with Maven.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench import __version__
from workbench.dev.ports import free_port_run

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = "extensions/dagger-workbench"
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]
#: Settings of the checkout's shell that would point the installed package back at it.
DROPPED = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    """``argv``'s stdout and stderr together, colours removed; fails the test with both when
    it fails."""
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built in this environment (the dev extra has the build system's
    requirements): an isolated build would install JupyterLab into a fresh folder first."""
    out = tmp_path_factory.mktemp("dist")
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "--wheel-dir", str(out), str(ROOT)]  # fmt: skip
    _run(argv, dict(os.environ), ROOT, timeout=900)
    (built,) = out.glob("dagger_workbench-*.whl")
    return built


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    """A folder outside the checkout: the venv, the user's cache and Jupyter folders, cwd."""
    path = tmp_path_factory.mktemp("outside")
    assert ROOT not in path.parents
    return path


@pytest.fixture(scope="module")
def env(place) -> dict[str, str]:
    """The environment of a user's shell with the venv activated: the checkout's settings
    (WORKBENCH_*, JUPYTER_*) dropped, caches and Jupyter's user folders under ``place``."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if k not in DROPPED and not k.startswith(("WORKBENCH_", "JUPYTER_"))
    }
    venv_bin = place / "venv" / "bin"
    return (
        kept
        | _pip_cache()
        | {
            "PATH": os.pathsep.join([str(venv_bin), os.environ["PATH"]]),
            "VIRTUAL_ENV": str(place / "venv"),
            "XDG_CACHE_HOME": str(place / "cache"),
            "JUPYTER_CONFIG_DIR": str(place / "jupyter-config"),
            "JUPYTER_DATA_DIR": str(place / "jupyter-data"),
            "WORKBENCH_SPARK_MASTER": "local[2]",
        }
    )


def _pip_cache() -> dict[str, str]:
    """pip's cache of this user (``PIP_CACHE_DIR``), or nothing when pip has none.

    The user's cache folder moves under ``place`` (``XDG_CACHE_HOME``), and pip's would
    move with it: pip would download every dependency again and build PySpark's wheel
    from its source archive (a 430 MB zip, a minute of CPU), none of which is the wheel's
    business. A user installing the wheel has their pip cache, so the venv gets this
    one."""
    asked = [sys.executable, "-m", "pip", "cache", "dir"]
    done = subprocess.run(asked, capture_output=True, text=True, check=False)
    folder = done.stdout.strip()
    return {"PIP_CACHE_DIR": folder} if done.returncode == 0 and folder else {}


@pytest.fixture(scope="module")
def venv(wheel, place, env) -> Path:
    """A fresh virtualenv with the wheel and its dependencies (pip's cache reused).

    ``--no-compile``: pip would byte-compile every module of every dependency (PySpark and
    JupyterLab are most of the install's two minutes); Python compiles those imported on
    first use instead, which is all the tests run."""
    root = place / "venv"
    _run([sys.executable, "-m", "venv", str(root)], env, place)
    pip = [str(root / "bin" / "python"), "-m", "pip", "install", "--no-compile"]
    _run([*pip, str(wheel)], env, place, 1200)
    return root / "bin"


def test_the_wheel_is_small_and_carries_what_it_ships(wheel, record_property):
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    size = wheel.stat().st_size
    record_property("figure", f"wheel {wheel.name}: {size / 1024:.0f} KiB, {len(names)} files")
    assert wheel.name == f"dagger_workbench-{__version__}-py3-none-any.whl"
    assert size < 5 * 1024 * 1024  # no node_modules, no build leftovers
    data = f"dagger_workbench-{__version__}.data/data"
    lab = f"{data}/share/jupyter/labextensions/@dagger-workbench/lab"
    for name in (
        "workbench/data/kernels/dagger-workbench/kernel.json",
        "workbench/data/templates/new-dagger.ipynb",
        "workbench/data/templates/dashboard.ipynb",
        "workbench/data/daggers/surge-pricing.yaml",
        "workbench/schemas/protos/esb/booking.proto",
        "workbench/dashboard/jupyter/voila/templates/workbench/index.html.j2",
        f"{lab}/package.json",
        f"{lab}/install.json",
        f"{data}/etc/jupyter/jupyter_server_config.d/dagger_workbench.json",
    ):
        assert name in names
    assert not [n for n in names if "node_modules" in n or "__pycache__" in n]
    assert any(n.startswith(f"{lab}/static/remoteEntry.") for n in names)


def test_the_cli_runs_from_the_venv_outside_the_checkout(venv, place, env):
    assert _run([str(venv / "workbench"), "--version"], env, place).strip() == (
        f"workbench {__version__}"
    )
    probe = (
        "import json, workbench, workbench.paths as p\n"
        "print(json.dumps({'package': workbench.__file__, 'home': str(p.home()),\n"
        "  'template': str(p.shipped('templates/new-dagger.ipynb'))}))"
    )
    where = json.loads(_run([str(venv / "python"), "-c", probe], env, place))
    site = str(venv.parent / "lib")
    assert where["package"].startswith(site) and where["template"].startswith(site)
    assert where["home"] == str(place / "cache" / "dagger-workbench")  # the user's cache


def test_jupyter_lists_the_lab_extension_enabled(venv, place, env):
    listed = _run([str(venv / "jupyter"), "labextension", "list"], env, place)
    line = next(x for x in listed.splitlines() if "@dagger-workbench/lab" in x)
    assert "enabled" in line and "OK" in line and "(python, dagger-workbench)" in line, listed
    source = json.loads((ROOT / EXTENSION / "package.json").read_text(encoding="utf-8"))
    installed = venv.parent / "share" / "jupyter" / "labextensions" / "@dagger-workbench" / "lab"
    built = json.loads((installed / "package.json").read_text(encoding="utf-8"))
    assert built["name"] == source["name"] == "@dagger-workbench/lab"
    assert f"@dagger-workbench/lab v{source['version']} enabled" in line
    schemas = source["jupyterlab"].get("schemaDir")  # every plugin's settings, when declared
    if schemas:
        expected = sorted(p.name for p in (ROOT / EXTENSION / schemas).glob("*.json"))
        shipped = installed / "schemas" / "@dagger-workbench" / "lab"
        assert expected and sorted(p.name for p in shipped.glob("*.json")) == expected


def test_jupyter_server_enables_the_job_service_extension(venv, place, env):
    listed = _run([str(venv / "jupyter"), "server", "extension", "list"], env, place)
    venv_config = listed.split(f"Config dir: {venv.parent / 'etc' / 'jupyter'}\n", 1)[1]
    venv_config = venv_config.split("Config dir:", 1)[0]  # enabled there, by the wheel
    assert "workbench.server enabled" in venv_config, listed
    assert re.search(r"workbench\.server\s+OK", venv_config), listed  # it imports


def test_workbench_kernel_install_makes_jupyter_list_the_kernel(venv, place, env):
    _run([str(venv / "workbench"), "kernel", "install"], env, place)
    listed = _run([str(venv / "jupyter"), "kernelspec", "list", "--json"], env, place)
    kernel = json.loads(listed)["kernelspecs"]["dagger-workbench"]
    assert kernel["resource_dir"].startswith(str(venv.parent / "share" / "jupyter" / "kernels"))
    assert kernel["spec"]["argv"][0] == str(venv / "python")
    assert "--ext=workbench.notebook" in kernel["spec"]["argv"]


def test_the_demo_runs_from_the_installed_package(venv, place, env, capsys):
    """The demo, as ``make demo`` runs it but from the wheel (the only test of the demo:
    the checkout runs the same code): jars fetched into the user's cache, the broker's
    state where ``--kafka-dir`` says, progress lines, and its own check of every window."""
    port = free_port_run(2)  # the controller takes port + 1
    kafka = place / "demo-kafka"
    started = time.monotonic()
    try:
        shown = _run(
            [str(venv / "workbench"), "demo", "--seconds", "20", "--port", str(port),
             "--kafka-dir", str(kafka)],
            env,
            place,
            timeout=900,
        )  # fmt: skip
    finally:
        down = [str(venv / "workbench"), "dev", "kafka", "down", "--port", str(port),
                "--state-dir", str(kafka)]  # fmt: skip
        subprocess.run(down, env=env, cwd=place, capture_output=True, timeout=120, check=False)
    with capsys.disabled():
        print(f"\nworkbench demo --seconds 20 in the venv: {time.monotonic() - started:.0f}s")
    state = place / "cache" / "dagger-workbench"
    assert f"kafka broker at 127.0.0.1:{port} (state in {kafka})" in shown
    assert "dagger 'surge-pricing':" in shown and str(state / "demo" / "parquet") in shown
    assert "[surge-pricing:sinks] batch " in shown  # progress lines
    assert "check: all" in shown and "closed windows match" in shown
    assert list((state / "jars").glob("*/*.jar"))  # fetched into the cache by the package
