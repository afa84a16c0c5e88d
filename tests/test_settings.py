"""The settings: one module reads the environment, and docs/configuration.md is its table."""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

from workbench import settings as settings_module
from workbench.cli.configuration import COMMAND, document
from workbench.settings import (
    NAMES,
    Settings,
    child_env,
    env_var,
    set_default,
    settings,
    variable,
)

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "workbench"
SETTINGS_FILE = PACKAGE / "settings.py"


def test_docs_configuration_is_generated_from_the_models():
    written = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert written == document(), f"docs/configuration.md is out of date: run `{COMMAND}`"


def _environment_uses(path: Path, root: Path = ROOT) -> list[str]:
    """Where ``path`` touches the environment: ``os.environ``, ``os.getenv``/``putenv``/
    ``unsetenv``, or those names imported from ``os``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                found.append(f"{path.relative_to(root)}:{node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [
                f"{path.relative_to(root)}:{node.lineno}: from os import {a.name}"
                for a in node.names
                if a.name in names
            ]
    return found


def test_only_the_settings_module_reads_the_environment():
    uses = [
        u for p in sorted(PACKAGE.rglob("*.py")) if p != SETTINGS_FILE for u in _environment_uses(p)
    ]
    assert not uses, (
        "read settings through workbench.settings (settings(), env_var(), child_env(), "
        "set_default()), not os.environ:\n" + "\n".join(uses)
    )


def test_the_check_sees_every_way_of_reading_the_environment(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom os import getenv\nos.environ.get('A')\nos.getenv('B')\nos.sep\n",
        encoding="utf-8",
    )
    assert len(_environment_uses(sample, tmp_path)) == 3


def test_every_workbench_variable_named_in_the_code_is_a_setting():
    """A ``WORKBENCH_*`` name written anywhere in the package is one of :class:`Settings`."""
    named = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named |= set(re.findall(r"\bWORKBENCH_[A-Z_]*[A-Z]\b", node.value))
    assert named - set(NAMES) == set()


def test_settings_follow_the_environment_as_tests_change_it(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "a"))
    assert settings().home == tmp_path / "a"
    assert settings() is settings()  # unchanged environment: the same object
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "b"))
    assert settings().home == tmp_path / "b"
    monkeypatch.setenv("WORKBENCH_HOME", "")  # empty counts as unset
    assert settings().home is None


def test_defaults_without_any_variable(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    current = settings()
    assert (current.spark_master, current.jit, current.kernel_jit) == ("local[2]", "full", "quick")
    assert (current.spark_start, current.jvm_archive, current.map_style) == (
        "background",
        "on",
        "none",
    )
    assert current.schemas == () and current.server is None and current.query_string == ""


@pytest.mark.parametrize(
    ("value", "jit", "kernel_jit"),
    [(" Quick ", "quick", "quick"), ("FULL", "full", "full"), ("fast", "full", "quick")],
)
def test_the_two_jit_settings_read_a_value_as_before(monkeypatch, value, jit, kernel_jit):
    """``WORKBENCH_JIT`` is quick only when it says so; ``WORKBENCH_KERNEL_JIT`` is full only
    when it says so (an unknown value keeps each one's default)."""
    monkeypatch.setenv("WORKBENCH_JIT", value)
    monkeypatch.setenv("WORKBENCH_KERNEL_JIT", value)
    assert (settings().jit, settings().kernel_jit) == (jit, kernel_jit)


def test_choices_and_lists_are_read_as_before(monkeypatch):
    monkeypatch.setenv("WORKBENCH_SPARK_START", " on-use ")
    monkeypatch.setenv("WORKBENCH_JVM_ARCHIVE", "OFF")
    monkeypatch.setenv("WORKBENCH_SPARK_LOG", "  stderr ")
    monkeypatch.setenv("WORKBENCH_SCHEMAS", os.pathsep.join(["/a", "", "/b"]))
    current = settings()
    assert (current.spark_start, current.jvm_archive, current.spark_log) == (
        "on-use",
        "off",
        "stderr",
    )
    assert current.schemas == ("/a", "/b")
    monkeypatch.setenv("WORKBENCH_SPARK_START", "ON-USE")  # matched exactly, as before
    assert settings().spark_start == "background"


def test_the_mapbox_token_has_two_names(monkeypatch):
    monkeypatch.delenv("MapboxAccessToken", raising=False)
    monkeypatch.setenv("MAPBOX_API_KEY", "second")
    assert settings().mapbox_key == "second"
    monkeypatch.setenv("MapboxAccessToken", "first")
    assert settings().mapbox_key == "first"
    assert variable("mapbox_key") == "MapboxAccessToken"


def test_dashboard_variables_override_its_settings(monkeypatch):
    for suffix in settings_module.DASHBOARD_OVERRIDES:
        monkeypatch.delenv(settings_module.DASHBOARD_PREFIX + suffix, raising=False)
    monkeypatch.setenv("WORKBENCH_DASHBOARD_REFRESH", "5")
    monkeypatch.setenv("WORKBENCH_DASHBOARD_AREAS", "bandung,surabaya")
    assert settings().dashboard_overrides() == {
        "refresh_seconds": "5",
        "areas": "bandung,surabaya",
    }


def test_a_child_environment_copies_this_ones_with_overrides(monkeypatch):
    monkeypatch.setenv("WORKBENCH_DASHBOARD_STORE", "influx1:http://x/db")
    monkeypatch.setenv("KEPT_FOR_THE_CHILD", "1")
    env = child_env({"WORKBENCH_DASHBOARD_CONFIG": "/f.yaml"}, drop_prefix="WORKBENCH_DASHBOARD_")
    assert env["KEPT_FOR_THE_CHILD"] == "1" and env["PATH"] == os.environ["PATH"]
    assert "WORKBENCH_DASHBOARD_STORE" not in env
    assert env["WORKBENCH_DASHBOARD_CONFIG"] == "/f.yaml"
    assert child_env({"KEPT_FOR_THE_CHILD": "2"})["KEPT_FOR_THE_CHILD"] == "2"


def test_set_default_keeps_a_value_already_set(monkeypatch):
    monkeypatch.setenv("WORKBENCH_SPARK_LOG_LEVEL", "INFO")
    set_default("WORKBENCH_SPARK_LOG_LEVEL", "OFF")
    assert settings().spark_log_level == "INFO"
    monkeypatch.delenv("WORKBENCH_SPARK_LOG_LEVEL")
    set_default("WORKBENCH_SPARK_LOG_LEVEL", "OFF")
    assert settings().spark_log_level == "OFF"


def test_env_var_tells_unset_from_empty(monkeypatch):
    monkeypatch.delenv("A_SECRET_FOR_THE_JOB", raising=False)
    assert env_var("A_SECRET_FOR_THE_JOB") is None
    monkeypatch.setenv("A_SECRET_FOR_THE_JOB", "")
    assert env_var("A_SECRET_FOR_THE_JOB") == ""


def test_every_setting_has_help():
    assert all(info.description for info in Settings.model_fields.values())


def test_the_generator_runs_as_a_module(tmp_path):
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli.configuration"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env({"PYTHONPATH": str(ROOT)}),
        check=True,
    )
    assert done.stdout == document()
