"""Dagger SQL (Flink style) → Spark SQL: parse, check names, rewrite, generate.

Stages, each one module: :mod:`.parse` → :mod:`.names` (tables and functions exist)
→ :mod:`.windows` (TUMBLE/HOP/SESSION) → :mod:`.laterals` (UNNEST) → :mod:`.joins`
(time-only interval joins) → :mod:`.functions`
(UDF rewrites, exact distinct counts) → generation, orchestrated by :mod:`.translate`.
"""

from workbench.sql.translate import Translation, translate

__all__ = ["Translation", "translate"]
