"""A job's ``spark_conf`` on a session that may already be running.

A session made for the job gets every key when it starts (:func:`workbench.runtime.spark.session`).
A session that was running already (a notebook kernel, a process that made one earlier)
takes runtime settings (``spark.sql.shuffle.partitions`` ...) through ``spark.conf.set``
for the job, and :func:`restore` puts the session's own values back when the job stops.
Settings Spark reads only at start (``spark.jars``, ``spark.driver.memory``,
``spark.master`` ...) cannot change: a value other than the session's raises
:class:`~workbench.exceptions.SparkConfError`, which says what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.exceptions import SparkConfError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Previous = dict[str, str | None]  # key -> the session's value before the job (None: unset)


def apply(spark: SparkSession, conf: Mapping[str, str], job: str) -> Previous:
    """Set ``conf``'s runtime keys on ``spark``; returns what to :func:`restore`. Raises
    :class:`SparkConfError` (having set nothing) if a start-only key differs."""
    previous: Previous = {}
    fixed: dict[str, tuple[str, str | None]] = {}
    for key, value in conf.items():
        have = _current(spark, key)
        if have == value:
            continue
        if _settable(spark, key, value):
            previous[key] = have
        else:
            fixed[key] = (value, have)
    if fixed:
        restore(spark, previous)
        raise SparkConfError(job, fixed)
    return previous


def restore(spark: SparkSession, previous: Previous) -> None:
    """Put back the values :func:`apply` replaced."""
    for key, value in previous.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def _current(spark: SparkSession, key: str) -> str | None:
    value = spark.conf.get(key, None)
    return value if value is not None else spark.sparkContext.getConf().get(key, None)


def _settable(spark: SparkSession, key: str, value: str) -> bool:
    """Set ``key`` if Spark lets it change at runtime (a SQL setting, or a key of its own
    that Spark does not read at start); False for keys fixed at start."""
    if not spark.conf.isModifiable(key) and spark.sparkContext.getConf().contains(key):
        return False  # a setting the session started with (spark.master, spark.jars, ...)
    try:
        spark.conf.set(key, value)
    except Exception as err:  # AnalysisException CANNOT_MODIFY_CONFIG: read only at start
        if "CANNOT_MODIFY_CONFIG" in str(err) or "Cannot modify" in str(err):
            return False
        raise
    return True
