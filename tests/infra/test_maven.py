"""Fetching jars with Maven: processes that want the same folder at once fetch it once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SLF4J = "org.slf4j:slf4j-api:1.7.36"
FETCH = (
    "from workbench.runtime.maven import fetch; "
    f"print(','.join(p.name for p in fetch('together', ['{SLF4J}'])))"
)


def test_two_processes_fetching_one_folder_run_maven_once(tmp_path):
    """The real ``mvn``, behind a wrapper on PATH that counts its runs."""
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "mvn"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho run >> {calls}\nexec {shutil.which("mvn")} "$@"\n')
    wrapper.chmod(0o755)
    env = {
        **os.environ,
        "WORKBENCH_HOME": str(tmp_path / "home"),
        "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FETCH],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "slf4j-api-1.7.36.jar"
    assert calls.read_text().splitlines() == ["run"]  # the second found it fetched
