"""Dagger's UDFs on Spark; see :mod:`workbench.udfs.registry`."""

from workbench.udfs.registry import UDFS, JvmFunction, Rewrite, Udf

__all__ = ["UDFS", "JvmFunction", "Rewrite", "Udf"]
