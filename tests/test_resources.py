"""A job's parallelism (``resources:``): its Spark settings, checks, and who wins."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from workbench.jobs.config import Cluster
from workbench.resources import Resources
from workbench.spec import parse

pytestmark = pytest.mark.unit


def test_each_key_is_the_spark_setting_it_names():
    resources = Resources(cores=4, executor_memory="2g", shuffle_partitions=8)
    assert resources.spark_conf() == {
        "spark.cores.max": "4",
        "spark.executor.memory": "2g",
        "spark.sql.shuffle.partitions": "8",
    }
    assert Resources().spark_conf() == {}  # unset: Spark's own


@pytest.mark.parametrize("bad", [{"cores": 0}, {"executor_memory": "lots"}, {"gpus": 1}])
def test_wrong_values_are_refused_with_what_to_write(bad):
    with pytest.raises(ValidationError) as err:
        Resources(**bad)
    if "executor_memory" in bad:
        assert "512m, 1g or 4g" in str(err.value)


def test_a_jobs_resources_come_over_its_clusters_and_its_spark_conf_over_both():
    cluster = Cluster(
        master="spark://10.0.0.5:7077",
        resources=Resources(cores=4, executor_memory="2g"),
        conf={"spark.driver.host": "10.0.0.9", "spark.sql.shuffle.partitions": "16"},
    )
    stream = {"table": "booking", "message": "esb.booking.BookingLogMessage",
              "bootstrap_servers": "127.0.0.1:9092", "topics": ["bookings"]}  # fmt: skip
    spec = parse({
        "name": "surge", "streams": [stream], "sql": "SELECT * FROM booking",
        "resources": {"cores": 2}, "spark_conf": {"spark.executor.memory": "3g"},
    })  # fmt: skip
    conf = {**cluster.spark_conf(), **spec.session_conf()}  # as the runner starts its session
    assert conf == {
        "spark.cores.max": "2",
        "spark.executor.memory": "3g",
        "spark.sql.shuffle.partitions": "16",
        "spark.driver.host": "10.0.0.9",
    }
    assert Resources(cores=1).over(cluster.resources) == Resources(cores=1, executor_memory="2g")
