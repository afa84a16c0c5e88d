"""JSON text fields read from a recording, rewritten the way the protobuf decoder writes them.

The decoder gives ``google.protobuf.Struct``, ``Value``, ``ListValue`` and ``Any`` fields as
compact JSON text (:mod:`workbench.sources.protobuf`); their Spark fields carry the metadata
:data:`~workbench.schemas.sparktypes.JSON_TEXT`. A JSON Lines recording holds such a field as
JSON (an object, array, number...) or as a string of JSON text; Spark's JSON reader keeps
the source's own spelling (spaces, escapes). :func:`as_decoded` rewrites those columns with
the decoder's rules (the JVM function ``workbench_json_text``), so a replay sees the very
text the streaming job sees for the same message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.schemas.sparktypes import is_json_text

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

FUNCTION = "workbench_json_text"
JAVA_CLASS = "io.daggerworkbench.udf.JsonText"


def as_decoded(frame: DataFrame, schema: StructType) -> DataFrame:
    """``frame`` (read with ``schema``) with its JSON text fields, at any depth, rewritten."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    changes = {
        f.name: _rewrite(F.col(f"`{f.name}`"), f.dataType, is_json_text(f))
        for f in schema.fields
        if f.name in frame.columns and _holds_json(f.dataType, is_json_text(f))
    }
    if not changes:
        return frame
    frame.sparkSession.udf.registerJavaFunction(FUNCTION, JAVA_CLASS, StringType())
    return frame.withColumns(changes)


def _holds_json(dtype: DataType, json: bool) -> bool:
    from pyspark.sql import types as T

    if isinstance(dtype, T.StringType):
        return json
    if isinstance(dtype, T.ArrayType):
        return _holds_json(dtype.elementType, json)
    if isinstance(dtype, T.MapType):
        return _holds_json(dtype.valueType, json)
    if isinstance(dtype, T.StructType):
        return any(_holds_json(f.dataType, is_json_text(f)) for f in dtype.fields)
    return False


def _rewrite(col: Column, dtype: DataType, json: bool) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not _holds_json(dtype, json):
        return col
    if isinstance(dtype, T.StringType):
        return F.call_function(FUNCTION, col)
    if isinstance(dtype, T.ArrayType):
        return F.transform(col, lambda e: _rewrite(e, dtype.elementType, json))
    if isinstance(dtype, T.MapType):
        return F.transform_values(col, lambda _, v: _rewrite(v, dtype.valueType, json))
    assert isinstance(dtype, T.StructType)
    fields = [
        _rewrite(col[f.name], f.dataType, is_json_text(f)).alias(f.name) for f in dtype.fields
    ]
    return F.when(col.isNull(), F.lit(None)).otherwise(F.struct(*fields))
