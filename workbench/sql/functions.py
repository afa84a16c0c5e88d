"""Function calls: Dagger UDF rewrites, exact distinct counts, unknown-name checks.

Spark streaming has no exact ``COUNT(DISTINCT x)``; it becomes the equivalent
``size(collect_set(x))``, whose state Spark keeps per group and window.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from sqlglot import exp

from workbench.exceptions import did_you_mean
from workbench.sql import positions, windows
from workbench.udfs import UDFS


@cache
def spark_functions() -> frozenset[str]:
    """Spark's built-in function names (lower case), as listed by ``SHOW SYSTEM FUNCTIONS``."""
    text = resources.files("workbench.sql").joinpath("spark_functions.txt").read_text()
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip())


def check_names(tree: exp.Expr, sql: str) -> None:
    """Every called function is a Dagger UDF, a Flink group window or a Spark built-in."""
    special = set(windows.GROUP_WINDOWS) | set(windows.AUXILIARY) | {"TABLE"}
    for node in tree.find_all(exp.Anonymous):
        name = node.name
        if name.upper() in special or UDFS.find(name) or name.lower() in spark_functions():
            continue
        known = [*UDFS.names(), *sorted(windows.GROUP_WINDOWS), *sorted(windows.AUXILIARY)]
        raise positions.error(
            f"Unknown function '{name}'.{did_you_mean(name, known)} "
            "Spark's built-in functions are available too.",
            sql,
            node,
        )


def rewrite(tree: exp.Expr, sql: str) -> exp.Expr:
    """Replace UDF calls that are rewrites, and COUNT(DISTINCT ...), innermost first."""

    def visit(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            return _distinct_count(node.this.expressions)
        if isinstance(node, exp.Anonymous):
            udf = UDFS.find(node.name)
            if udf is None:
                return node
            if not udf.arity_ok(len(node.expressions)):
                raise positions.error(
                    f"{udf.name} takes {_arity(udf)}: {udf.signature}.", sql, node
                )
            bad = udf.out_of_range(list(node.expressions))
            if bad is not None:
                raise positions.error(bad[1], sql, bad[0])
            return udf.rewrite(list(node.expressions)) or node
        return node

    for node in reversed(list(tree.dfs())):  # children first, so nested calls are rewritten
        new = visit(node)
        if new is not node:
            node.replace(new)
    return tree


def _arity(udf) -> str:
    low, high = len(udf.params) - udf.optional, len(udf.params)
    count = f"{low}" if low == high else f"{low} to {high}"
    return f"{count} argument{'s' if high != 1 else ''}"


def _distinct_count(args: list[exp.Expr]) -> exp.Expr:
    """COUNT(DISTINCT a[, b...]) with SQL semantics: rows with any NULL are not counted."""
    if len(args) == 1:
        value = args[0].copy()
    else:
        not_null = exp.and_(
            *(exp.Not(this=exp.Is(this=a.copy(), expression=exp.Null())) for a in args)
        )
        value = exp.Case(
            ifs=[
                exp.If(
                    this=not_null,
                    true=exp.Anonymous(this="struct", expressions=[a.copy() for a in args]),
                )
            ]
        )
    collected = exp.Anonymous(this="collect_set", expressions=[value])
    return exp.Anonymous(this="size", expressions=[collected])
