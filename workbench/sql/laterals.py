"""Flink's lateral joins → Spark ``LATERAL VIEW``.

* ``FROM booking, UNNEST(booking.items) AS items (id, quantity, name)`` becomes
  ``FROM booking LATERAL VIEW inline(booking.items) items AS id, quantity, name``:
  ``inline`` for arrays of rows, ``explode`` for arrays of plain values.
* ``LATERAL TABLE(HistogramBucket(v, '1,2,5')) AS T(bucket)`` becomes
  ``LATERAL VIEW explode(<the table function's array>) T AS bucket``.
* ``LEFT JOIN ... ON TRUE`` keeps rows with nothing to unnest (``OUTER``).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from workbench.sql import positions
from workbench.udfs.registry import substitute

#: The field names of the rows in the array column at a dotted path (``["b", "items"]``:
#: a table or alias first, or a bare column); ``[]`` for an array of plain values;
#: None when it cannot tell.
ElementFields = Callable[[list[str]], list[str] | None]


def rewrite(tree: exp.Expr, sql: str, element_fields: ElementFields) -> exp.Expr:
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        lateral = [j for j in joins if _is_lateral(j)]
        if not lateral:
            continue
        views = [_view(j, sql, element_fields) for j in lateral]
        select.set("joins", [j for j in joins if not _is_lateral(j)] or None)
        select.set("laterals", [*(select.args.get("laterals") or []), *views])
    return tree


def _is_lateral(join: exp.Join) -> bool:
    return isinstance(join.this, exp.Unnest) or _table_function(join) is not None


def _table_function(join: exp.Join) -> exp.Anonymous | None:
    node = join.this
    if (
        isinstance(node, exp.Lateral)
        and isinstance(node.this, exp.Anonymous)
        and node.this.name.upper() == "TABLE"
        and len(node.this.expressions) == 1
    ):
        return node.this.expressions[0]
    return None


def _view(join: exp.Join, sql: str, element_fields: ElementFields) -> exp.Lateral:
    function = _table_function(join)
    source = join.this
    alias = source.args.get("alias")
    if not alias or not alias.args.get("columns"):
        example = (
            "UNNEST(t.items) AS items (id, quantity, name)"
            if function is None
            else "LATERAL TABLE(HistogramBucket(v, '1,5')) AS T(bucket)"
        )
        raise positions.error(f"Name the lateral columns, e.g. {example}.", sql, source)
    array: exp.Expr
    if function is not None:
        generator, array = "explode", function.copy()
    else:
        if len(source.expressions) != 1:
            raise positions.error("UNNEST takes one array column.", sql, source)
        array = source.expressions[0].copy()
        columns = [c.name for c in alias.args["columns"]]
        fields = (
            element_fields([p.name for p in array.parts]) if isinstance(array, exp.Column) else None
        )
        generator = (
            "inline" if (bool(fields) if fields is not None else len(columns) > 1) else "explode"
        )
        array = _by_name(array, columns, fields or [])
    outer = join.side == "LEFT"
    return exp.Lateral(
        this=exp.Anonymous(this=generator + ("_outer" if outer else ""), expressions=[array]),
        view=True,
        alias=exp.TableAlias(
            this=alias.this.copy(), columns=[c.copy() for c in alias.args["columns"]]
        ),
    )


def _by_name(array: exp.Expr, columns: list[str], fields: list[str]) -> exp.Expr:
    """Rows whose fields are in the aliases' order, when the aliases name the fields.

    Flink binds UNNEST aliases by position in the row type; a recording's inferred
    schema may order fields differently, so names that match fields bind by name.
    """
    lowered = {f.lower(): f for f in fields}
    if (
        not fields
        or [c.lower() for c in columns] == [f.lower() for f in fields]
        or not all(c.lower() in lowered for c in columns)
    ):
        return array
    pairs = ", ".join(f"'{c}', __x.`{lowered[c.lower()]}`" for c in columns)
    return substitute(f"transform({{0}}, __x -> named_struct({pairs}))", [array])
