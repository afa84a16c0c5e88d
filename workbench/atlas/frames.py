"""Whatever a map is asked to draw, as a pandas DataFrame.

Accepted: a pandas DataFrame, a Spark DataFrame (at most ``max_rows`` rows are collected),
a list of dicts, or any object with a ``.rows`` attribute holding one of those (a notebook
preview's result).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.atlas.errors import AtlasError
from workbench.exceptions import UnknownNameError

if TYPE_CHECKING:
    import pandas as pd

MAX_ROWS = 200_000


def to_pandas(data: Any, max_rows: int = MAX_ROWS) -> pd.DataFrame:
    import pandas as pd

    if hasattr(data, "rows") and not isinstance(data, pd.DataFrame):
        data = data.rows
    if isinstance(data, pd.DataFrame):
        return data
    if _is_spark(data):
        return data.limit(max_rows).toPandas()
    if isinstance(data, Sequence) and all(isinstance(row, Mapping) for row in data):
        return pd.DataFrame(list(data))
    raise AtlasError(
        f"Cannot map a {type(data).__name__}: pass a pandas or Spark DataFrame, a list of "
        "dicts, or a preview (an object with .rows)."
    )


def _is_spark(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark.") and hasattr(data, "toPandas")


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    for column in columns:
        if column not in frame.columns:
            raise UnknownNameError(f"{what} column", column, [str(c) for c in frame.columns])


def numeric_columns(frame: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return [
        str(c)
        for c in frame.columns
        if c not in exclude and is_numeric_dtype(frame[c]) and not is_bool_dtype(frame[c])
    ]


def display_value(value: Any) -> Any:
    """A JSON-friendly value for a tooltip: timestamps as text, floats rounded, NaN as None."""
    import math
    from datetime import date, datetime

    import pandas as pd

    if value is None or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp | datetime | date):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, 4)
    if isinstance(value, int) and abs(value) > 2**53:
        return str(value)  # JavaScript numbers would round it
    if isinstance(value, str | int | bool):
        return value
    return str(value)
