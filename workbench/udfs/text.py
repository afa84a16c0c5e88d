"""Dagger's string and JSON functions, on the JVM (Java's split and Jayway JsonPath)."""

from __future__ import annotations

from workbench.udfs.registry import UDFS, JvmFunction

_PACKAGE = "io.daggerworkbench.udf"

UDFS.add(
    JvmFunction(
        name="Split",
        params=("text STRING", "delimiter STRING"),
        returns="array<string>",
        doc="Java's String.split: regex delimiter, trailing empties dropped, NULL gives [].",
        java_class=f"{_PACKAGE}.Split",
    )
)
UDFS.add(
    JvmFunction(
        name="JsonQuery",
        params=("json STRING", "path STRING"),
        returns="string",
        doc="The node a JSONPath selects, as JSON text (strings keep their quotes); "
        "NULL if absent.",
        java_class=f"{_PACKAGE}.JsonQuery",
    )
)
