"""InfluxDB sink configuration (v1 and v2 write APIs), with Dagger's row convention.

Rows map to points: ``window_timestamp`` is the point time, ``tag_*`` columns are
tags keeping the prefix, ``label_*`` columns are tags without it, other non-null
columns are fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import field_validator, model_validator

from workbench.exceptions import SinkError
from workbench.sinks.registry import SINKS, SinkConfig, SinkContext
from workbench.urls import check_http_url

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from workbench.sinks.influx_writer import InfluxWriter


class InfluxConfig(SinkConfig):
    type: Literal["influx"] = "influx"
    url: str = "http://127.0.0.1:8086"
    measurement: str
    api: Literal[1, 2] = 2
    # v2 (InfluxDB 2.x/3.x, VictoriaMetrics)
    token: str | None = None
    org: str | None = None
    bucket: str | None = None
    # v1 (InfluxDB 1.x)
    username: str | None = None
    password: str | None = None
    database: str | None = None
    retention_policy: str | None = None
    time_column: str = "window_timestamp"
    batch_size: int = 5000
    flush_interval_ms: int = 1000
    retries: int = 5

    _url = field_validator("url")(lambda cls, value: check_http_url(value))

    @model_validator(mode="after")
    def _api_keys(self) -> InfluxConfig:
        if self.api == 1 and not self.database:
            raise ValueError("the v1 API (api: 1) needs 'database'")
        if self.api == 2 and not self.bucket:
            raise ValueError("the v2 API (api: 2) needs 'bucket' (and 'org', 'token' if secured)")
        return self

    def describe(self) -> str:
        target = self.database if self.api == 1 else self.bucket
        return f"influx v{self.api} {self.url} {target}/{self.measurement}"

    def target(self) -> str:
        where = self.database if self.api == 1 else self.bucket
        return f"the InfluxDB measurement '{self.measurement}' of '{where}' at {self.url}"

    def check(self, schema: StructType) -> None:
        from workbench.sinks.influx_writer import LABEL_PREFIX, TAG_PREFIX

        columns = [f.name for f in schema.fields]
        self.require_column(schema, self.time_column, "time_column", "for the points' time")
        fields = [
            c
            for c in columns
            if c != self.time_column and not c.startswith((TAG_PREFIX, LABEL_PREFIX))
        ]
        if not fields:
            raise SinkError(
                self.describe(),
                "the query has only tag_*/label_* columns and the time: a point needs "
                "at least one field (a column without those prefixes)",
            )

    def open(self, ctx: SinkContext, index: int) -> InfluxBatchWriter:
        from workbench.sinks.influx_writer import InfluxWriter

        return InfluxBatchWriter(InfluxWriter(self))


class InfluxBatchWriter:
    """Micro-batches to points. A replayed batch rewrites the same points (same
    measurement, tags and time), so it never double-counts."""

    def __init__(self, writer: InfluxWriter):
        self._writer = writer

    def write(self, batch: DataFrame, batch_id: int) -> int:
        return self._writer.write(row.asDict() for row in batch.toLocalIterator())

    def close(self) -> None:
        self._writer.close()


SINKS.add("influx", InfluxConfig)
