"""The UDF registry: every Dagger function, by name, and how Spark runs it.

Two shapes of function:

* :class:`JvmFunction` -- a Java class compiled into the workbench UDF jar and
  registered on the session (``spark.udf.registerJavaFunction``); no Python in the
  hot loop.
* :class:`Rewrite` -- the call is rewritten, at translation time, into built-in Spark
  SQL (a template over the arguments), so Catalyst compiles it and streaming
  supports it (aggregates such as ``DistinctCount`` become ``size(collect_set(x))``).

A module registers its functions with ``UDFS.add(...)`` at import (the modules of
:data:`BUILTIN`, imported on the first question); third-party packages register through
the ``workbench.udfs`` entry-point group (:class:`workbench.plugins.Plugins`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from workbench.plugins import Plugins

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from sqlglot import exp

Kind = Literal["scalar", "aggregate", "table"]


@dataclass(frozen=True)
class Udf:
    name: str
    params: tuple[str, ...]
    returns: str
    doc: str
    kind: Kind = "scalar"
    optional: int = 0  # how many trailing params may be omitted
    #: (argument index, lowest, highest): a constant integer argument must be in range
    ranges: tuple[tuple[int, int, int], ...] = ()

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)}) -> {self.returns}"

    def arity_ok(self, n: int) -> bool:
        return len(self.params) - self.optional <= n <= len(self.params)

    def out_of_range(self, args: list[exp.Expr]) -> tuple[exp.Expr, str] | None:
        """The first constant argument outside its range, and what is wrong with it."""
        for index, low, high in self.ranges:
            value = _constant_int(args[index]) if index < len(args) else None
            if value is not None and not low <= value <= high:
                param = self.params[index].split()[0]
                return args[index], (
                    f"{self.name}'s {param} is {value}: it must be between {low} and {high}."
                )
        return None

    def register(self, spark: SparkSession) -> None:
        """Make the function callable on ``spark`` (rewrites need nothing)."""

    def rewrite(self, args: list[exp.Expr]) -> exp.Expr | None:
        """Spark SQL for a call with ``args``, or None when Spark calls it by name."""
        return None


@dataclass(frozen=True)
class JvmFunction(Udf):
    """Registered twice: under its own name, for people writing Spark SQL, and under
    ``dagger_<name>``, which translations call, because Spark's built-ins win over
    temporary functions of the same name (``split``)."""

    java_class: str = ""

    @property
    def spark_name(self) -> str:
        return f"dagger_{self.name.lower()}"

    def register(self, spark: SparkSession) -> None:
        from pyspark.sql.types import _parse_datatype_string

        returns = _parse_datatype_string(self.returns)
        for name in (self.name, self.spark_name):
            spark.udf.registerJavaFunction(name, self.java_class, returns)

    def rewrite(self, args: list[exp.Expr]) -> exp.Expr:
        from sqlglot import exp

        return exp.Anonymous(this=self.spark_name, expressions=args)


@dataclass(frozen=True)
class Rewrite(Udf):
    """``template`` is Spark SQL with ``{0}``, ``{1}``... for the arguments,
    or a callable building the expression from the argument expressions."""

    template: str | Callable[[list[exp.Expr]], exp.Expr] = ""

    def rewrite(self, args: list[exp.Expr]) -> exp.Expr:
        if callable(self.template):
            return self.template(args)
        return substitute(self.template, args)


def _constant_int(node: exp.Expr) -> int | None:
    """The value of an integer literal (``13``, ``-1``, ``(31)``), else None."""
    from sqlglot import exp

    node = node.unnest()
    sign = 1
    if isinstance(node, exp.Neg):
        node, sign = node.this.unnest(), -1
    if isinstance(node, exp.Literal) and not node.is_string and node.name.lstrip("+").isdigit():
        return sign * int(node.name)
    return None


def substitute(template: str, args: list[exp.Expr]) -> exp.Expr:
    """Parse ``template`` once per call shape and put copies of ``args`` in its holes."""
    import sqlglot
    from sqlglot import exp

    holes = template.format(*(f"__arg{i}__" for i in range(len(args))))
    tree = sqlglot.parse_one(holes, read="spark")

    def fill(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name.startswith("__arg"):
            return exp.paren(args[int(node.name[5:-2])].copy(), copy=False)
        return node

    return tree.transform(fill)


#: the modules registering the built-in functions
BUILTIN = tuple(
    f"workbench.udfs.{name}" for name in ("aggregates", "collections", "geo", "text", "time")
)


class UdfRegistry(Plugins[Udf]):
    """Functions by name, case-insensitively."""

    def __init__(self) -> None:
        super().__init__("function", BUILTIN, "workbench.udfs", fold=True)

    def add(self, name: str | Udf, plugin: Udf | None = None) -> Udf:
        """``add(udf)``: a function is registered under its own name."""
        udf = name if isinstance(name, Udf) else plugin
        assert udf is not None, "add(udf) or add(name, udf)"
        return super().add(udf.name, udf)

    def register_all(self, spark: SparkSession) -> None:
        for udf in self:
            udf.register(spark)


UDFS = UdfRegistry()
