"""``deduplicate``: each key of the SQL's output once within a span of event time.

Dagger's ``DeDuplicationTransformer`` (``key_column``, ``ttl_in_seconds``) passes the
first row of a key and drops later rows with that key until the key's TTL ends. Here
the same filter is Spark's ``dropDuplicatesWithinWatermark`` on the result rows:

* it needs an event-time column among the output columns, one that carries the input
  watermark (the rowtime attribute, selected as is or renamed);
* Spark keeps a key until the watermark passes that row's event time plus the column's
  watermark delay, so the column is given ``within`` as its delay (the watermark itself
  stays the inputs'). A key is forgotten once the watermark is ``within`` past its first
  row: the span is event time, where Dagger's TTL is processing time;
* like a window, it drops rows later than the watermark;
* ``columns`` (optional) are the columns written afterwards: the event time may be in
  the SELECT list for deduplication only (``import-dagger`` adds it so when a Dagger
  job's SQL leaves it out, since Dagger's transformer did not need it).

Over a batch (``replay``, ``validate``) it keeps one row per key of the whole input,
with the same checks (keys among the output columns, an event time among them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.exceptions import SpecError, UnknownNameError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.spec import DeduplicateSpec

#: Spark's column metadata for an event-time column's watermark delay
DELAY_KEY = "spark.watermarkDelayMs"


def apply(result: DataFrame, spec: DeduplicateSpec | None, rowtime: str = "rowtime") -> DataFrame:
    """``result`` with repeated keys dropped per ``spec`` (``result`` itself when None)."""
    if spec is None:
        return result
    for key in spec.keys:
        if key not in result.columns:
            known = UnknownNameError("output column", key, result.columns)
            raise SpecError("deduplicate.keys", f"{known} Name columns the SQL selects.")
    column = event_time_column(result, rowtime)
    if column is None:
        raise SpecError(
            "deduplicate",
            f"needs the event time among the SQL's output columns: add '{rowtime}' to the "
            "SELECT list (windowed results are already one row per window and key).",
        )
    for name in spec.columns or []:
        if name not in result.columns:
            known = UnknownNameError("output column", name, result.columns)
            raise SpecError("deduplicate.columns", f"{known} Name columns the SQL selects.")
    if not result.isStreaming:
        kept = result.dropDuplicates(spec.keys)
    else:
        spanned = _spanned(result, column, spec.within_ms)
        kept = spanned.dropDuplicatesWithinWatermark(spec.keys)
    return kept.select(*spec.columns) if spec.columns else kept


def event_time_column(frame: DataFrame, rowtime: str = "rowtime") -> str | None:
    """The output column carrying the inputs' watermark (``rowtime`` first if several).

    A batch frame has no watermark: there any timestamp column stands in for it, so
    ``validate`` and ``replay`` refuse what ``run`` would."""
    from pyspark.sql.types import TimestampType

    fields = frame.schema.fields
    timed = [f.name for f in fields if DELAY_KEY in f.metadata]
    if not frame.isStreaming:
        timed = [f.name for f in fields if isinstance(f.dataType, TimestampType)]
    return rowtime if rowtime in timed else next(iter(timed), None)


def _spanned(frame: DataFrame, column: str, within_ms: int) -> DataFrame:
    """``column`` with ``within_ms`` as its delay; other columns' watermark marks removed,
    since Spark deduplicates against exactly one event-time column."""
    for field in frame.schema.fields:
        if DELAY_KEY in field.metadata:
            meta = {k: v for k, v in field.metadata.items() if k != DELAY_KEY}
            if field.name == column:
                meta[DELAY_KEY] = within_ms
            frame = frame.withMetadata(field.name, meta)
    return frame
