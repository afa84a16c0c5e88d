"""Where Spark's JVM output goes: a real JVM started in a subprocess with its output sent to
a file, and the setting that keeps it on stderr."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from workbench.runtime import jvm_log

pytestmark = pytest.mark.unit

START_SPARK = """
from workbench.runtime.spark import session
spark = session()
try:
    spark.sql("SELECT nope").collect()
except Exception as err:
    print(type(err).__name__)
"""


@pytest.mark.integration
def test_a_log_file_takes_the_jvm_output_and_the_java_stacks(tmp_path):
    log = tmp_path / "spark.log"
    env = os.environ | {jvm_log.ENV: str(log)}
    done = subprocess.run([sys.executable, "-c", START_SPARK], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "AnalysisException"
    assert done.stderr == ""  # neither the JVM's warnings nor PySpark's JSON stack
    text = log.read_text()
    assert "Using incubator modules" in text and "UNRESOLVED_COLUMN" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spark.log"]  # no artifacts/


def test_the_setting_keeps_it_on_stderr(monkeypatch, tmp_path):
    monkeypatch.setattr(jvm_log, "_state", {})
    monkeypatch.setenv(jvm_log.ENV, "stderr")
    assert jvm_log.to_file(tmp_path / "x.log") is None and jvm_log.current() is None
    assert "stderr" in jvm_log.tail()
    monkeypatch.delenv(jvm_log.ENV)
    assert jvm_log.to_file(tmp_path / "x.log") == tmp_path / "x.log"
    assert "nothing logged yet" in jvm_log.tail()
