"""A job's Spark parallelism: ``resources: {cores, executor_memory, shuffle_partitions}``.

The same keys are a cluster's defaults (``clusters.NAME.resources`` in the job service's
config, :mod:`workbench.jobs.config`) and a job's choice (the spec's ``resources:``); each
becomes the Spark setting it names, so a job's own ``spark_conf`` still wins:

=====================  ===============================  ===================================
key                    Spark setting                    meaning
=====================  ===============================  ===================================
``cores``              ``spark.cores.max``              cores the application takes from a
                                                        standalone (or Mesos) cluster
``executor_memory``    ``spark.executor.memory``        heap of each executor (``1g``)
``shuffle_partitions`` ``spark.sql.shuffle.partitions`` partitions of the windows' state;
                                                        fixed by a query's checkpoint once
                                                        it has started (Spark keeps the
                                                        first value)
=====================  ===============================  ===================================

On ``local[N]`` masters the driver runs the tasks itself: ``N`` is the parallelism and
``cores``/``executor_memory`` change nothing. On YARN and Kubernetes set
``spark.executor.instances`` and ``spark.executor.cores`` through ``conf``/``spark_conf``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Spark's size strings: 512m, 1g, 2048k, 1t
_SIZE = re.compile(r"^\d+[kmgtp]?b?$", re.IGNORECASE)
SETTINGS = {
    "cores": "spark.cores.max",
    "executor_memory": "spark.executor.memory",
    "shuffle_partitions": "spark.sql.shuffle.partitions",
}


class Resources(BaseModel):
    """Cores, executor memory and shuffle partitions; unset keys leave Spark's own."""

    model_config = ConfigDict(extra="forbid")

    cores: int | None = Field(default=None, ge=1, description="spark.cores.max")
    executor_memory: str | None = Field(default=None, description="spark.executor.memory")
    shuffle_partitions: int | None = Field(
        default=None, ge=1, description="spark.sql.shuffle.partitions"
    )

    @field_validator("executor_memory")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None and not _SIZE.match(value.strip()):
            raise ValueError(f"'{value}' is not a memory size: write e.g. 512m, 1g or 4g")
        return value.strip() if value else value

    def spark_conf(self) -> dict[str, str]:
        """The Spark settings of the keys that are set."""
        return {
            SETTINGS[key]: str(value)
            for key, value in self.model_dump().items()
            if value is not None
        }

    def over(self, defaults: Resources) -> Resources:
        """These resources, ``defaults``' where a key is unset."""
        mine = {k: v for k, v in self.model_dump().items() if v is not None}
        return Resources(**{**defaults.model_dump(), **mine})
