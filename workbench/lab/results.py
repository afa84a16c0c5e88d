"""Result rows as JSON Lines: keys are the SQL's column names, timestamps ISO-8601 UTC."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"


def sortable(frame: DataFrame) -> list[str]:
    from pyspark.sql.types import MapType

    return [f.name for f in frame.schema.fields if not isinstance(f.dataType, MapType)]


def json_lines(frame: DataFrame, ordered: bool = True) -> Iterator[str]:
    """One JSON object per row, NULLs kept, in a stable order (all sortable columns)."""
    from pyspark.sql import functions as F

    keys = sortable(frame) if ordered else []
    if keys:
        frame = frame.orderBy(*[F.col(f"`{c}`") for c in keys])
    options = {"timestampFormat": TIMESTAMP_FORMAT, "ignoreNullFields": "false"}
    lines = frame.select(
        F.to_json(F.struct(*[F.col(f"`{c}`") for c in frame.columns]), options).alias("j")
    )
    for row in lines.toLocalIterator():
        yield row["j"]


def write_rows(frame: DataFrame, path: str | Path) -> int:
    """Write ``frame``'s rows to ``path`` (:func:`json_lines`); returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for line in json_lines(frame):
            out.write(line + "\n")
            count += 1
    return count
