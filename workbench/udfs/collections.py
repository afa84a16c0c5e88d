"""Dagger's array and map functions, rewritten into Spark built-ins."""

from __future__ import annotations

from workbench.udfs.registry import UDFS, Rewrite

UDFS.add(
    Rewrite(
        name="ElementAt",
        params=("array ARRAY", "index INT"),
        returns="string",
        doc="Element at 0-based `index` as a string; negative counts from the end; NULL when out "
        "of range.",
        template="CAST(try_element_at({0}, CASE WHEN {1} >= 0 THEN {1} + 1 ELSE {1} END) "
        "AS STRING)",
    )
)
UDFS.add(
    Rewrite(
        name="MapGet",
        params=("map MAP", "key ANY"),
        returns="value type",
        doc="Value stored under `key` in a (protobuf) map; NULL when absent.",
        template="try_element_at({0}, {1})",
    )
)
UDFS.add(
    Rewrite(
        name="ListContains",
        params=("list ARRAY<STRING>", "item STRING"),
        returns="boolean",
        doc="Whether `list` holds `item` (exact, case-sensitive); false for a NULL list.",
        template="coalesce(array_contains({0}, {1}), false)",
    )
)
UDFS.add(
    Rewrite(
        name="HistogramBucket",
        params=("value DOUBLE", "buckets STRING"),
        returns="rows(bucket)",
        kind="table",
        doc="Table function: '+Inf' and every comma-separated bound >= `value` (cumulative 'le' "
        "buckets). Use as LATERAL TABLE(HistogramBucket(v, '1,5,10')) AS T(bucket).",
        template="concat(array('+Inf'), filter(transform(split({1}, ','), __b -> trim(__b)), "
        "__b -> CAST({0} AS DOUBLE) <= CAST(__b AS DOUBLE)))",
    )
)
