"""``workbench warehouse`` on a path with nothing there: a clear error, before Spark starts."""

from __future__ import annotations

import pytest

from workbench.cli.main import main

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("command", ["files", "compact", "vacuum"])
def test_a_missing_table_is_said_before_spark_starts(command, tmp_path, capsys):
    from pyspark import SparkContext

    started = SparkContext._active_spark_context
    assert main(["warehouse", command, str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nowhere'}: no such folder" in err and "Traceback" not in err
    assert SparkContext._active_spark_context is started  # none started here
