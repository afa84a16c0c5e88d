"""Dagger's aggregate functions, rewritten into Spark aggregates that streaming supports."""

from __future__ import annotations

from sqlglot import exp

from workbench.udfs.registry import UDFS, Rewrite, substitute


def _collect_array(args: list[exp.Expr]) -> exp.Expr:
    """collect_list keeping NULLs and arrival order, as Dagger's CollectArray does.

    ``CollectArray(DISTINCT x)`` keeps the first occurrence of each value.
    """
    arg = args[0]
    distinct = isinstance(arg, exp.Distinct)
    value = arg.expressions[0] if distinct else arg
    kept = substitute("transform(collect_list(named_struct('v', {0})), __e -> __e.v)", [value])
    return exp.Anonymous(this="array_distinct", expressions=[kept]) if distinct else kept


def _percentile(args: list[exp.Expr]) -> exp.Expr:
    """Apache commons-math's default (legacy) percentile, as Dagger computes it.

    pos = p * (n + 1) / 100 over the sorted values s; below 1 → min, from n on → max,
    else linear interpolation. No rows → NaN. (The one-element ``aggregate`` binds s.)
    """
    p, value = args
    p = p if isinstance(p, exp.Literal) else exp.Anonymous(this="last", expressions=[p])
    pos = "(CAST({0} AS DOUBLE) * (size(__s) + 1) / 100)"
    low, high = f"__s[CAST(floor({pos}) AS INT) - 1]", f"__s[CAST(floor({pos}) AS INT)]"
    body = (
        f"CASE WHEN size(__s) = 0 THEN CAST('NaN' AS DOUBLE) WHEN {pos} < 1 THEN __s[0] "
        f"WHEN {pos} >= size(__s) THEN __s[size(__s) - 1] "
        f"ELSE {low} + ({pos} - floor({pos})) * ({high} - {low}) END"
    )
    return substitute(
        "aggregate(array(array_sort(collect_list(CAST({1} AS DOUBLE)))), "
        f"CAST(NULL AS DOUBLE), (__acc, __s) -> {body})",
        [p, value],
    )


UDFS.add(
    Rewrite(
        name="DistinctCount",
        params=("value ANY",),
        returns="int",
        kind="aggregate",
        doc="Exact number of distinct non-null values (compared as strings, as in Dagger).",
        template="size(collect_set(CAST({0} AS STRING)))",
    )
)
UDFS.add(
    Rewrite(
        name="CollectArray",
        params=("value ANY",),
        returns="array",
        kind="aggregate",
        doc="All values of the group in arrival order, NULLs kept; "
        "CollectArray(DISTINCT x) dedupes.",
        template=_collect_array,
    )
)
for _name in ("Percentile", "PercentileAggregator"):
    UDFS.add(
        Rewrite(
            name=_name,
            params=("percentile DOUBLE", "value DOUBLE"),
            returns="double",
            kind="aggregate",
            template=_percentile,
            doc="The `percentile`-th (0-100) percentile of `value`, "
            "commons-math legacy estimation.",
        )
    )
