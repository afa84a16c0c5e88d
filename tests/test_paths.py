"""Where the workbench keeps its state and finds what it ships, in a checkout and as if
installed from a wheel (the packaging test installs a real one)."""

from __future__ import annotations

import pytest

from workbench import paths
from workbench.exceptions import SetupError

pytestmark = pytest.mark.unit


def test_a_checkout_keeps_its_state_in_dot_workbench(monkeypatch):
    monkeypatch.delenv("WORKBENCH_HOME", raising=False)
    assert paths.in_checkout()
    assert paths.home() == paths.CHECKOUT / ".workbench"


def test_installed_the_state_goes_to_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("WORKBENCH_HOME", raising=False)
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path / "site-packages")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert not paths.in_checkout()
    assert paths.home() == tmp_path / "cache" / "dagger-workbench"
    assert paths.subdir("jars").is_dir()


def test_workbench_home_overrides_both(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "mine"))
    assert paths.home() == tmp_path / "mine"


def test_shipped_files_come_from_the_checkouts_top_level_folders():
    assert paths.shipped("kernels/dagger-workbench/kernel.json") == (
        paths.CHECKOUT / "kernels" / "dagger-workbench" / "kernel.json"
    )
    assert paths.shipped("templates/new-dagger.ipynb").is_file()


def test_shipped_files_come_from_the_package_when_installed(monkeypatch, tmp_path):
    package = tmp_path / "workbench"
    (package / "data" / "templates").mkdir(parents=True)
    (package / "data" / "templates" / "new-dagger.ipynb").write_text("{}")
    monkeypatch.setattr(paths, "PACKAGE_DIR", package)
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path)
    assert paths.shipped("templates/new-dagger.ipynb") == (
        package / "data" / "templates" / "new-dagger.ipynb"
    )
    with pytest.raises(SetupError, match="reinstall it"):
        paths.shipped("kernels/dagger-workbench")
