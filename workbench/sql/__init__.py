"""Dagger SQL (Flink style) → Spark SQL: parse, check names, rewrite, generate.

Stages, each one module: :mod:`.parse` (nesting bounded) → :mod:`.names` (tables and
functions exist) → :mod:`.enums` (enum fields compared with their own values) →
:mod:`.literals` (columns compared with literals Spark can read as their type) →
:mod:`.windows` (TUMBLE/HOP/SESSION) → :mod:`.laterals` (UNNEST) → :mod:`.joins`
(time-only interval joins) → :mod:`.functions` (UDF rewrites and argument ranges, exact
distinct counts) → generation, orchestrated by :mod:`.translate`; :mod:`.analysis` tells
Spark's analysis errors in terms of the SQL as written.
"""

from workbench.sql.translate import Translation, translate

__all__ = ["Translation", "translate"]
