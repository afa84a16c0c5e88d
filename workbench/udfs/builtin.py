"""Imports every module that registers built-in UDFs."""

from workbench.udfs import aggregates, collections, geo, text, time  # noqa: F401
