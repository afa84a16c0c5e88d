"""JSON Lines recordings checked line by line before Spark reads them.

Spark's JSON reader turns a value of the wrong type deep inside a row into a null (or a
whole line holding an array into several rows) without a word. Here every line must be
one JSON object whose values fit the message's Spark schema (nested structs, arrays,
maps included) and whose event-time field holds a time; any other line is a reject with
its ``file:line`` and the path of the offending value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.exceptions import clip

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

MAX_REJECTS = 10_000
NO_TIME = "no readable event time"
_NON_NUMBERS = {"NaN", "Infinity", "-Infinity", "+Infinity", "+INF", "-INF", "INF"}


@dataclass
class Checked:
    """The lines of a recording that fit, and the rejects (up to :data:`MAX_REJECTS`)."""

    good: list[str] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)
    rejected: int = 0  # every reject, also those past the cap


def files(path: str | Path) -> list[Path]:
    """The JSON Lines files of a recording (a file, or the files of a folder)."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    return sorted(c for c in p.iterdir() if c.is_file() and not c.name.startswith((".", "_")))


def check(path: str | Path, schema: StructType | None, event_field: str | None) -> Checked:
    """Every line of the recording at ``path`` checked against ``schema`` (types) and
    ``event_field`` (a readable time); ``schema`` None checks objects and times only."""
    out = Checked()
    for file in files(path):
        for number, text in _lines(file):
            problem = _problem(text, schema, event_field)
            if problem is None:
                out.good.append(text)
                continue
            out.rejected += 1
            if len(out.rejects) < MAX_REJECTS:
                raw = clip(text, 2000)
                out.rejects.append(
                    {"file": str(file), "line": number, "error": problem, "raw": raw}
                )
    return out


def _lines(file: Path) -> Iterator[tuple[int, str]]:
    with open(file, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            text = line.rstrip("\n").rstrip("\r")
            if text.strip():
                yield number, text


def _problem(text: str, schema: StructType | None, event_field: str | None) -> str | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return f"not valid JSON: {err.msg} at column {err.colno}"
    if isinstance(value, list):
        return "a JSON array; each line must be one message as a JSON object"
    if not isinstance(value, dict):
        return "not a JSON object (each line must be one message as an object)"
    if event_field is not None and not _is_time(value.get(event_field)):
        got = "missing" if value.get(event_field) is None else clip(repr(value[event_field]))
        return f"{NO_TIME} in field '{event_field}' ({got}): ISO-8601 or epoch ms"
    if schema is None:
        return None
    skip = {event_field} if event_field else set()
    return _mismatch(value, schema, "", skip)


def _is_time(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return math.isfinite(value)
    if isinstance(value, str):
        if value.lstrip("-").isdigit():
            return True
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
            return True
        except ValueError:
            return False
    return False


def _mismatch(
    value: Any,
    dtype: DataType,
    path: str,
    skip: set | frozenset = frozenset(),
    json_text: bool = False,
) -> str | None:
    """Where and why ``value`` does not fit ``dtype`` (None when it fits). ``json_text``:
    the field is a Struct/Value/ListValue/Any (JSON text), which any JSON value fits."""
    from pyspark.sql import types as T

    from workbench.schemas.sparktypes import CUT, is_json_text

    if value is None:
        return None
    if isinstance(dtype, T.StructType):
        if not isinstance(value, dict):
            return _wrong(path, "an object", value)
        names = {f.name: f for f in dtype.fields}
        for key, item in value.items():
            if key in skip:
                continue
            if key not in names:
                return f"'{clip(_join(path, key))}' is not a field of the message; known: " + clip(
                    ", ".join(names), 200
                )
            field = names[key]
            found = _mismatch(
                item,
                field.dataType,
                _join(path, key),
                skip=frozenset(field.metadata.get(CUT, ())),  # past the recursion depth
                json_text=is_json_text(field),
            )
            if found:
                return found
        return None
    if isinstance(dtype, T.ArrayType):
        if not isinstance(value, list):
            return _wrong(path, "an array (a repeated field)", value)
        for i, item in enumerate(value):
            found = _mismatch(item, dtype.elementType, f"{path}[{i}]", skip, json_text)
            if found:
                return found
        return None
    if isinstance(dtype, T.MapType):
        if not isinstance(value, dict):
            return _wrong(path, "an object (a map)", value)
        for key, item in value.items():
            found = _mismatch(item, dtype.valueType, _join(path, key), skip, json_text)
            if found:
                return found
        return None
    if json_text and isinstance(dtype, T.StringType):
        return None
    return _scalar(value, dtype, path)


def _scalar(value: Any, dtype: DataType, path: str) -> str | None:
    from pyspark.sql import types as T

    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(dtype, T.IntegralType):
        fits = is_number and float(value).is_integer()
        return None if fits else _wrong(path, "a whole number", value)
    if isinstance(dtype, T.FractionalType | T.DecimalType):
        fits = is_number or (isinstance(value, str) and value in _NON_NUMBERS)
        return None if fits else _wrong(path, "a number", value)
    if isinstance(dtype, T.BooleanType):
        return None if isinstance(value, bool) else _wrong(path, "true or false", value)
    if isinstance(dtype, T.TimestampType | T.TimestampNTZType | T.DateType):
        return None if _is_time(value) else _wrong(path, "a time (ISO-8601)", value)
    if isinstance(dtype, T.StringType | T.BinaryType):
        fits = not isinstance(value, dict | list)
        return None if fits else _wrong(path, "a string", value)
    return None


def _wrong(path: str, expected: str, value: Any) -> str:
    return f"'{clip(path or '(row)')}' must be {expected}, got {clip(json.dumps(value), 60)}"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
