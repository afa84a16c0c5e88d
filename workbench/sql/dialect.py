"""The dagger dialect: Spark's grammar, with Dagger's UDF names left as plain calls
and ``SESSION`` an ordinary name (Flink's session group window).

sqlglot maps some names (``Split``, ``Percentile``...) to its own typed expressions
with other meanings; Dagger's UDFs must stay calls so the UDF registry decides.
"""

from __future__ import annotations

from functools import cache

from sqlglot.dialects.spark import Spark

from workbench.udfs import UDFS


@cache
def dagger_dialect() -> type[Spark]:

    ours = {name.upper() for name in UDFS.names()}

    class Dagger(Spark):
        class Tokenizer(Spark.Tokenizer):  # type: ignore[valid-type,misc]
            KEYWORDS = {k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k != "SESSION"}

        class Parser(Spark.Parser):  # type: ignore[valid-type,misc]
            FUNCTIONS = {k: v for k, v in Spark.Parser.FUNCTIONS.items() if k not in ours}
            FUNCTION_PARSERS = {
                k: v for k, v in Spark.Parser.FUNCTION_PARSERS.items() if k not in ours
            }

    return Dagger
