"""Bounded sources: recordings of decoded messages in JSON Lines or Parquet.

A JSON Lines row that does not parse (or does not fit the message's schema) is a
*reject*: reported with its file and line number, never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import BadRecordError, SetupError, UnknownNameError, clip
from workbench.sources import jsonrows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

CORRUPT = "_corrupt_record"
MAX_REJECTS = 10_000


@dataclass
class Recording:
    frame: DataFrame
    rejects: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Format:
    """How one recording format is checked (no Spark) and read (Spark)."""

    check: Callable[[str, StructType | None, str], jsonrows.Checked]
    read: Callable[[SparkSession, str, StructType | None, str, jsonrows.Checked], Recording]


FORMATS: dict[str, Format] = {}


def detect(path: str) -> str:
    """The format of a recording, from its name (a folder: from the files in it)."""
    p = Path(path)
    names = [p.name] if not p.is_dir() else [c.name for c in p.iterdir() if c.is_file()]
    for name in names:
        if ".parquet" in name:
            return "parquet"
        if any(ext in name for ext in (".jsonl", ".json", ".ndjson")):
            return "jsonl"
    raise UnknownNameError(
        "recording format",
        p.suffix or path,
        FORMATS,
        where="(name files *.jsonl, *.json or *.parquet)",
    )


def check(
    path: str, schema: StructType | None = None, event_time_field: str = "event_timestamp"
) -> jsonrows.Checked:
    """What can be known about a recording before Spark starts: it exists, has a known
    format, and (JSON Lines) which lines fit ``schema`` and hold an event time."""
    if not Path(path).exists():
        raise SetupError(f"No recording at '{clip(path)}': give an existing file or folder.")
    return FORMATS[detect(path)].check(path, schema, event_time_field)


def read(
    spark: SparkSession,
    path: str,
    schema: StructType | None = None,
    event_time_field: str = "event_timestamp",
    checked: jsonrows.Checked | None = None,
) -> Recording:
    """The recording as a frame; its rejects are those of ``checked`` (made here when not
    given) and the rows Spark still cannot read."""
    if checked is None:
        checked = check(path, schema, event_time_field)
    found = FORMATS[detect(path)].read(spark, path, schema, event_time_field, checked)
    return Recording(found.frame, _counted(checked) + found.rejects)


def _check_parquet(path: str, schema: StructType | None, event_time_field: str):
    for file in jsonrows.files(path):
        if ".parquet" in file.name and not _is_parquet(file):
            raise BadRecordError(
                f"Recording '{clip(file)}' is not a Parquet file (it lacks Parquet's PAR1 "
                "markers). Give a Parquet file, or name JSON Lines *.jsonl."
            )
    return jsonrows.Checked()


def _read_parquet(spark, path, schema, event_time_field, checked) -> Recording:
    return Recording(spark.read.parquet(path))


def _is_parquet(file: Path) -> bool:
    """A Parquet file starts and ends with the magic bytes ``PAR1``."""
    size = file.stat().st_size
    if size < 8:
        return False
    with open(file, "rb") as handle:
        head = handle.read(4)
        handle.seek(size - 4)
        return head == handle.read(4) == b"PAR1"


def _check_jsonl(path: str, schema: StructType | None, event_time_field: str):
    checked = jsonrows.check(path, schema, event_time_field)
    if not checked.good:
        raise BadRecordError(_none_readable(path, checked), checked.rejects)
    return checked


def _read_jsonl(spark, path, schema, event_time_field, checked) -> Recording:
    """Spark reads the lines that passed :func:`_check_jsonl`; what it still cannot read
    is a reject too."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    reader_ = spark.read.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
    if schema is not None:
        fields = [
            StructField(f.name, StringType()) if f.name == event_time_field else f
            for f in schema.fields
        ]
        reader_ = reader_.schema(StructType([*fields, StructField(CORRUPT, StringType())]))
    source = spark.sparkContext.parallelize(checked.good) if checked.rejected else path
    frame = reader_.json(source)
    if CORRUPT not in frame.columns:
        return Recording(_as_decoded(frame, schema))
    others = [c for c in frame.columns if c != CORRUPT][:1]
    if not others:  # Spark will not query the corrupt-record column alone from raw JSON
        frame = frame.cache()
    bad = (
        frame.where(F.col(CORRUPT).isNotNull())
        .select(CORRUPT, F.input_file_name().alias("file"), *others)
        .limit(MAX_REJECTS)
        .collect()
    )
    good = frame.where(F.col(CORRUPT).isNull()).drop(CORRUPT)
    return Recording(_as_decoded(good, schema), _locate(bad, schema is not None, path))


def _as_decoded(frame: DataFrame, schema: StructType | None) -> DataFrame:
    """Struct/Value/ListValue/Any fields as the decoder's JSON text (schemas.jsontext)."""
    from workbench.schemas.jsontext import as_decoded

    return frame if schema is None else as_decoded(frame, schema)


FORMATS["parquet"] = Format(_check_parquet, _read_parquet)
FORMATS["jsonl"] = Format(_check_jsonl, _read_jsonl)


def _counted(checked: jsonrows.Checked) -> list[dict]:
    """The rejects, with a last entry saying how many more there were past the cap."""
    more = checked.rejected - len(checked.rejects)
    if more <= 0:
        return checked.rejects
    note = {"file": "", "line": None, "error": f"... and {more} more rejected rows", "raw": ""}
    return [*checked.rejects, note]


def _none_readable(path: str, checked: jsonrows.Checked) -> str:
    first = checked.rejects[0] if checked.rejects else None
    why = f" (line {first['line']}: {first['error']})" if first else " (it is empty)"
    fix = "Give JSON Lines: one JSON object per line."
    if first and first["raw"].lstrip().startswith("["):
        fix = "It looks like one JSON array: write one object per line (e.g. jq -c '.[]')."
    elif first and first["error"].startswith(jsonrows.NO_TIME):
        fix = "Name the field holding the event time with --rowtime-field (or the spec's "
        fix += "event_timestamp_field)."
    return f"Recording '{clip(path)}': no line is a readable message{why}. {fix}"


def _locate(bad: list, typed: bool, path: str) -> list[dict]:
    """Rejects with their line numbers, found by scanning the files that hold them."""
    by_file: dict[str, set[str]] = {}
    for row in bad:
        by_file.setdefault(row["file"] or "", set()).add(row[CORRUPT])
    rejects = []
    for file, texts in by_file.items():
        local = file.removeprefix("file://") or path
        if Path(local).is_dir():
            continue  # read from the checked lines: already located above
        with open(local, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                text = line.rstrip("\n").rstrip("\r")
                if text in texts:
                    rejects.append(
                        {"file": local, "line": number, "error": _why(text, typed), "raw": text}
                    )
    return rejects


def _why(text: str, typed: bool) -> str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return f"not valid JSON: {err.msg} at column {err.colno}"
    if not isinstance(value, dict):
        return "not a JSON object (each line must be one message as an object)"
    return (
        "a value does not have the type the message schema expects"
        if typed
        else "cannot be read with the other rows' schema"
    )
