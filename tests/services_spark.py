"""Spark standalone fixtures: one real cluster (master + 2 workers on 127.0.0.1) for a test
file that asks for it, stopped when that file ends (module scope).
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    """A running :class:`~workbench.dev.spark.SparkCluster`; ``.status().master_url``."""
    from workbench.dev.spark import SparkCluster

    cluster = SparkCluster(tmp_path_factory.mktemp("spark"), workers=2, cores=1, memory="1g")
    cluster.start()
    yield cluster
    cluster.stop()
