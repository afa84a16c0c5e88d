"""Time-only interval joins → equi-joins on a time bucket, which Spark streaming runs.

Flink (and Dagger) join two streams on a time range alone::

    FROM s0 JOIN s1 ON s1.rowtime BETWEEN s0.rowtime AND s0.rowtime + INTERVAL '5' MINUTE

Spark's stream-stream join needs an equality between the sides ("Stream-stream join
without equality predicate is not supported"). So when a join's condition bounds one
side's time by the other's, ``x BETWEEN y + lo AND y + hi`` (or the same with ``>=``/``<=``
/``>``/``<`` in either direction), and has no equality between the sides:

* bucket size ``B = hi - lo`` (at least 1 ms);
* the ``x`` side gets the column ``floor(epoch_ms(x) / B)``;
* the ``y`` side is exploded over the buckets ``floor((epoch_ms(y) + lo) / B)`` ..
  ``floor((epoch_ms(y) + hi) / B)`` (one or two of them);
* the join adds the equality of the two bucket columns and keeps the range condition.

A matching pair shares exactly one bucket, so it matches exactly once; the range
condition still lets Spark drop join state by the watermarks. An outer join explodes
the side whose unmatched rows are not kept (the range is symmetric: ``y`` lies in
``[x - hi, x - lo]``), so an unmatched row is emitted once. The helper columns are
named :data:`HELPER_PREFIX`... and left out of ``*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import sqlglot
from sqlglot import exp

from workbench.sql import intervals, positions
from workbench.sql.dialect import dagger_dialect

#: Prefix of the columns this stage adds; never shown to the user.
HELPER_PREFIX = "__dagger_"

_Col = tuple[str, str]  # (relation alias, column), lower case


@dataclass(frozen=True)
class _Range:
    """``x - y`` lies in ``[low, high]`` milliseconds."""

    x: exp.Column
    y: exp.Column
    low: int
    high: int


def rewrite(tree: exp.Expr, sql: str) -> exp.Expr:
    """Give every time-only interval join a bucket equality, in place."""
    numbers = count(1)
    for select in list(tree.find_all(exp.Select)):
        added: dict[str, list[str]] = {}
        for index, join in enumerate(select.args.get("joins") or []):
            relations = _relations(select, index)
            bounds = _time_range(join, relations)
            if bounds is None:
                continue
            number = next(numbers)
            for alias, column in _bucket(select, join, index, bounds, number, sql):
                added.setdefault(alias, []).append(column)
        if added:
            _hide_from_stars(select, added)
    return tree


def _relations(select: exp.Select, index: int) -> tuple[set[str], str]:
    """Aliases of the relations left of join ``index``, and the join's own alias."""
    joins = select.args["joins"]
    left = [select.args["from_"].this, *(j.this for j in joins[:index])]
    return {r.alias_or_name.lower() for r in left}, joins[index].this.alias_or_name.lower()


def _time_range(join: exp.Join, relations: tuple[set[str], str]) -> _Range | None:
    """The time range between the join's sides, when that is all that links them."""
    on = join.args.get("on")
    if on is None or join.args.get("using"):
        return None
    left, right = relations
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    if any(_links(c, left, right) for c in conjuncts if isinstance(c, exp.EQ)):
        return None
    found: dict[tuple[_Col, _Col], list[int | None]] = {}
    columns: dict[_Col, exp.Column] = {}
    for conjunct in conjuncts:
        for x, y, low, high in _bounds(conjunct):
            kx, ky = _key(x), _key(y)
            if not ((kx[0] == right and ky[0] in left) or (ky[0] == right and kx[0] in left)):
                continue
            columns.update({kx: x, ky: y})
            if (ky, kx) in found:  # one orientation per pair: y - x lies in [-high, -low]
                kx, ky, low, high = ky, kx, _neg(high), _neg(low)
            pair = found.setdefault((kx, ky), [None, None])
            pair[0] = _tighter(pair[0], low, max)
            pair[1] = _tighter(pair[1], high, min)
    for (kx, ky), (low, high) in found.items():
        if low is not None and high is not None and low <= high:
            return _Range(columns[kx], columns[ky], low, high)
    return None


def _tighter(old: int | None, new: int | None, pick) -> int | None:
    return old if new is None else new if old is None else pick(old, new)


def _neg(value: int | None) -> int | None:
    return None if value is None else -value


def _links(eq: exp.EQ, left: set[str], right: str) -> bool:
    """An equality between the sides (an unqualified column might be either side)."""
    tables = {c.table.lower() for c in eq.find_all(exp.Column)}
    return (right in tables and bool(tables & left)) or "" in tables


def _key(column: exp.Column) -> _Col:
    return column.table.lower(), column.name.lower()


def _bounds(node: exp.Expr) -> list[tuple[exp.Column, exp.Column, int | None, int | None]]:
    """``(x, y, low, high)``: the condition says ``x - y`` in ``[low, high]`` (None: open)."""
    if isinstance(node, exp.Between):
        x, lo, hi = _term(node.this), _term(node.args["low"]), _term(node.args["high"])
        if x and lo and hi and _key(lo[0]) == _key(hi[0]):
            return [(x[0], lo[0], lo[1] - x[1], hi[1] - x[1])]
        return []
    if isinstance(node, exp.GTE | exp.GT | exp.LTE | exp.LT):
        a, b = _term(node.this), _term(node.expression)
        if not (a and b):
            return []
        difference = b[1] - a[1]  # a.col - b.col compared with this
        if isinstance(node, exp.GTE | exp.GT):
            return [(a[0], b[0], difference, None)]
        return [(a[0], b[0], None, difference)]
    return []


def _term(node: exp.Expr) -> tuple[exp.Column, int] | None:
    """``column [+|- interval literal]`` as (column, offset in ms)."""
    node = node.unnest()
    if isinstance(node, exp.Column) and node.table and not isinstance(node.this, exp.Star):
        return node, 0
    if isinstance(node, exp.Add | exp.Sub):
        base, ms = node.this.unnest(), intervals.millis(node.expression.unnest())
        if isinstance(node, exp.Add) and ms is None:  # INTERVAL ... + column
            base, ms = node.expression.unnest(), intervals.millis(node.this.unnest())
        if isinstance(base, exp.Column) and base.table and ms is not None:
            return base, ms if isinstance(node, exp.Add) else -ms
    return None


def _bucket(
    select: exp.Select, join: exp.Join, index: int, bounds: _Range, number: int, sql: str
) -> list[tuple[str, str]]:
    """Add the bucket columns and their equality; returns (alias, column) of each."""
    x, y, low, high = bounds.x, bounds.y, bounds.low, bounds.high
    own = join.this.alias_or_name.lower()
    side = (join.side or "").upper()
    if side == "FULL":
        raise positions.error(
            "A FULL OUTER join of streams on a time range alone cannot run on Spark: "
            "add an equality between the two sides (e.g. a key column).",
            sql,
            join,
        )
    # The exploded side (y) must be the one whose unmatched rows are not kept.
    exploded_must_be_own = side == "LEFT"
    if (side in ("LEFT", "RIGHT")) and ((y.table.lower() == own) != exploded_must_be_own):
        x, y, low, high = y, x, -high, -low
    size = max(high - low, 1)
    single, spread = (f"{HELPER_PREFIX}join{number}_{n}" for n in ("x", "y"))
    ms = "UNIX_MILLIS({t})"
    _add_column(select, index, x.table, single, f"FLOOR({ms} / {size})", x)
    _add_column(
        select,
        index,
        y.table,
        spread,
        f"EXPLODE(SEQUENCE(FLOOR(({ms} + {low}) / {size}), FLOOR(({ms} + {high}) / {size})))",
        y,
    )
    equality = exp.EQ(
        this=exp.column(single, table=x.table), expression=exp.column(spread, table=y.table)
    )
    join.set("on", exp.and_(join.args["on"], equality))
    return [(x.table.lower(), single), (y.table.lower(), spread)]


def _add_column(
    select: exp.Select, index: int, alias: str, name: str, template: str, time: exp.Column
) -> None:
    """Wrap the relation ``alias`` as ``(SELECT alias.*, <expr> AS name FROM ...) AS alias``."""
    dialect = dagger_dialect()
    relations = [select.args["from_"].this, *(j.this for j in select.args["joins"][: index + 1])]
    relation = next(r for r in relations if r.alias_or_name.lower() == alias.lower())
    expression = sqlglot.parse_one(template.format(t=time.sql(dialect=dialect)), read=dialect)
    ident = exp.to_identifier(relation.alias_or_name)
    inner = exp.select(
        exp.Column(this=exp.Star(), table=ident.copy()), exp.alias_(expression, name)
    ).from_(relation.copy())
    relation.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=ident)))


def _hide_from_stars(select: exp.Select, added: dict[str, list[str]]) -> None:
    """``*`` and ``alias.*`` in the SELECT leave out the helper columns."""
    everything = [c for columns in added.values() for c in columns]
    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            star, names = projection, everything
        elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            star, names = projection.this, added.get(projection.table.lower(), [])
        else:
            continue
        if names:
            kept = list(star.args.get("except_") or [])
            star.set("except_", [*kept, *(exp.column(n) for n in names)])
