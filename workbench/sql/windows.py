"""Flink group windows → Spark time windows.

``GROUP BY TUMBLE(rowtime, INTERVAL '1' MINUTE)`` becomes ``window(rowtime, '60 seconds')``,
``HOP(rowtime, slide, size)`` becomes ``window(rowtime, size, slide)``, and
``SESSION(rowtime, gap)`` becomes ``session_window(rowtime, gap)``. The auxiliary
functions of the same SELECT (``TUMBLE_START/END/ROWTIME``...) read the window struct.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from workbench.durations import spark_interval
from workbench.sql import intervals, positions

#: group window function -> (Spark window function, number of arguments)
GROUP_WINDOWS = {"TUMBLE": ("window", 2), "HOP": ("window", 3), "SESSION": ("session_window", 2)}
_AUX_PARTS = ("START", "END", "ROWTIME")
AUXILIARY = {f"{w}_{p}": (w, p) for w in GROUP_WINDOWS for p in _AUX_PARTS}


def _name(node: exp.Expr) -> str | None:
    return node.name.upper() if isinstance(node, exp.Anonymous) else None


@dataclass(frozen=True)
class GroupWindow:
    kind: str
    args: tuple[str, ...]  # canonical SQL of the arguments, to match auxiliary calls
    spark_column: str  # name of the struct column Spark creates


def rewrite(tree: exp.Expr, sql: str) -> exp.Expr:
    """Rewrite every SELECT's group window and its auxiliary functions, in place."""
    for select in list(tree.find_all(exp.Select)):
        window = _rewrite_group(select, sql)
        _rewrite_auxiliary(select, window, sql)
    for node in tree.find_all(exp.Anonymous):  # anything left is misplaced
        if _name(node) in GROUP_WINDOWS:
            raise positions.error(
                f"{_name(node)}(...) is a group window: use it in GROUP BY.", sql, node
            )
    return tree


def _rewrite_group(select: exp.Select, sql: str) -> GroupWindow | None:
    group = select.args.get("group")
    calls = [e for e in (group.expressions if group else []) if _name(e) in GROUP_WINDOWS]
    if not calls:
        return None
    if len(calls) > 1:
        raise positions.error("Only one group window per GROUP BY.", sql, calls[1])
    call = calls[0]
    kind = _name(call) or ""
    spark_fn, arity = GROUP_WINDOWS[kind]
    if len(call.expressions) != arity:
        usage = {
            "TUMBLE": "TUMBLE(rowtime, size)",
            "HOP": "HOP(rowtime, slide, size)",
            "SESSION": "SESSION(rowtime, gap)",
        }[kind]
        raise positions.error(f"{kind} takes {arity} arguments: {usage}.", sql, call)
    time_col, *durations = call.expressions
    spark_args = [_duration(d, sql, call) for d in durations]
    if kind == "HOP":
        spark_args.reverse()  # Flink: slide, size; Spark: size, slide
    call.replace(exp.Anonymous(this=spark_fn, expressions=[time_col.copy(), *spark_args]))
    return GroupWindow(kind, tuple(a.sql() for a in call.expressions), spark_fn)


def _duration(node: exp.Expr, sql: str, call: exp.Expr) -> exp.Literal:
    ms = intervals.millis(node)
    if ms is None:
        raise positions.error(
            "Window sizes are interval literals such as INTERVAL '60' SECOND.", sql, call
        )
    if ms <= 0:
        raise positions.error(
            f"A window size must be positive, not {node.sql()}: e.g. INTERVAL '60' SECOND.",
            sql,
            node if positions.first_in(node) else call,
        )
    return exp.Literal.string(spark_interval(ms))


def _rewrite_auxiliary(select: exp.Select, window: GroupWindow | None, sql: str) -> None:
    nested = (exp.Select, exp.Subquery)
    for node in list(select.walk(prune=lambda n: n is not select and isinstance(n, nested))):
        name = _name(node)
        if name not in AUXILIARY:
            continue
        kind, part = AUXILIARY[name]
        if window is None or window.kind != kind:
            raise positions.error(
                f"{name} needs GROUP BY {kind}(...) in the same SELECT.", sql, node
            )
        if tuple(a.sql() for a in node.expressions) != window.args:
            expected = f"{kind}({', '.join(window.args)})"
            raise positions.error(
                f"{name} must repeat the arguments of GROUP BY {expected}.", sql, node
            )
        node.replace(_window_part(window.spark_column, part))


def _window_part(column: str, part: str) -> exp.Expr:
    if part == "ROWTIME":  # Flink: the window's last millisecond, still a time attribute
        end = exp.column("end", table=column)
        return exp.Sub(
            this=end,
            expression=exp.Interval(this=exp.Literal.string("1"), unit=exp.Var(this="MILLISECOND")),
        )
    return exp.column(part.lower(), table=column)
