"""QualitySpec: a ``kind: quality`` spec, the YAML of one quality job.

    kind: quality
    name: bookings-quality
    streams:
      - topics: [payment-log]          # or topic_pattern
        message: esb.payment.PaymentMessage
        event_timestamp_field: event_timestamp
    window: 10m                        # event-time windows
    allowed_lateness: 30m              # how long a window still takes late records
    late_after: 1m                     # publish time - event time beyond this is late
    business_key: payment_id           # a field naming one record: duplicates by it too
    sinks: [...]                       # influx and parquet, from the sink registry
    alerts: [...]                      # metric rules over the metric rows

Its streams are dagger streams (:class:`~workbench.spec.StreamSpec`) whose ``table`` is
optional. :data:`workbench.kinds.KINDS` parses either kind: a spec without ``kind`` is a
dagger.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from workbench.alerts.rules import AlertRule, check_columns, check_notifiers
from workbench.durations import to_millis
from workbench.exceptions import SpecError
from workbench.quality.metrics import COLUMNS
from workbench.sinks.registry import SinkConfig
from workbench.spec import DaggerSpec, StreamSpec, _Model, _spec_error, located, sink_list
from workbench.streaming.checkpoints import stream_identity
from workbench.streams import resolve
from workbench.yamlsafe import read_yaml

if TYPE_CHECKING:
    from workbench.schemas import SchemaRegistry


class QualityStream(StreamSpec):
    """A stream the quality job reads: a dagger stream whose table defaults to ``records``;
    it reads committed records only (``isolation.level=read_committed``) unless its
    ``kafka_options`` say otherwise."""

    table: str = "records"
    starting_offsets: int | str | dict[str, dict[str, int]] = "earliest"


class ReconcileSpec(_Model):
    """A dagger's Parquet sink or Delta table to compare with Kafka, window by window."""

    path: str
    format: Literal["parquet", "delta"] = Field(
        "parquet", description="the dagger's sink: a parquet folder or a delta table"
    )
    time_column: str = "window_timestamp"
    count_column: str | None = Field(None, description="a column of counts to sum; rows if unset")
    time_is: Literal["end", "start"] = Field(
        "end", description="whether time_column marks a row's window end (Dagger's) or start"
    )
    recheck_every: str | int = Field("1h", description="how often emitted windows are re-checked")
    recheck_for: str | int = Field("1d", description="how far back windows are re-checked")

    @field_validator("recheck_every", "recheck_for")
    @classmethod
    def _duration(cls, value: str | int) -> str | int:
        to_millis(value)
        return value


class QualitySpec(_Model):
    kind: Literal["quality"] = "quality"
    name: str
    team: str = "default"
    description: str = ""
    streams: list[QualityStream] = Field(min_length=1)
    window: str | int = "10m"
    allowed_lateness: str | int = "30m"
    late_after: str | int = "1m"
    business_key: str | None = None
    trigger_interval: str | int = "10s"
    sinks: list[SinkConfig] = Field(default_factory=list)
    checkpoint: str | None = None
    schemas: list[str] = Field(default_factory=list)
    spark_conf: dict[str, str] = Field(default_factory=dict)
    alerts: list[AlertRule] = Field(default_factory=list)
    notifiers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    reconcile: ReconcileSpec | None = None
    history_retention: str | int = "7d"

    _name = field_validator("name")(lambda cls, v: DaggerSpec._job_name(v))  # type: ignore[operator]

    @field_validator(
        "window", "allowed_lateness", "late_after", "trigger_interval", "history_retention"
    )
    @classmethod
    def _duration(cls, value: str | int) -> str | int:
        to_millis(value)
        return value

    @field_validator("window")
    @classmethod
    def _positive(cls, value: str | int) -> str | int:
        if to_millis(value) <= 0:
            raise ValueError("a window is longer than 0, e.g. '10m'")
        return value

    _sinks = field_validator("sinks", mode="before")(lambda cls, value: sink_list(value))
    _notifiers = field_validator("notifiers", mode="before")(
        lambda cls, value: check_notifiers(value)
    )

    @model_validator(mode="before")
    @classmethod
    def _tables(cls, data: Any) -> Any:
        """Streams without a table get ``records``, ``records_1``, ... in order."""
        if isinstance(data, dict) and isinstance(data.get("streams"), list):
            streams = [
                {"table": "records" if i == 0 else f"records_{i}", **s}
                if isinstance(s, dict)
                else s
                for i, s in enumerate(data["streams"])
            ]
            data = {**data, "streams": streams}
        return data

    @model_validator(mode="after")
    def _distinct_tables(self) -> QualitySpec:
        tables = [s.table for s in self.streams]
        if len(set(tables)) != len(tables):
            raise ValueError(f"stream tables must differ, got {tables}")
        return self

    @property
    def window_ms(self) -> int:
        return to_millis(self.window)

    @property
    def allowed_lateness_ms(self) -> int:
        return to_millis(self.allowed_lateness)

    @property
    def late_after_ms(self) -> int:
        return to_millis(self.late_after)

    @property
    def history_retention_ms(self) -> int:
        return to_millis(self.history_retention)

    @property
    def trigger_interval_ms(self) -> int:
        return to_millis(self.trigger_interval)

    def session_conf(self) -> dict[str, str]:
        """Its ``spark_conf``, over Delta Lake's settings when it reconciles a Delta table."""
        if self.reconcile is not None and self.reconcile.format == "delta":
            from workbench.warehouse.delta import session_conf

            return session_conf() | dict(self.spark_conf)
        return dict(self.spark_conf)

    def with_bootstrap(self, servers: str) -> QualitySpec:
        """This spec with every Kafka address (streams, Kafka sinks) set to ``servers``."""
        streams = [s.model_copy(update={"bootstrap_servers": servers}) for s in self.streams]
        sinks = [s.with_bootstrap(servers) for s in self.sinks]
        return self.model_copy(update={"streams": streams, "sinks": sinks})


def parse(data: Any, source: str | None = None) -> QualitySpec:
    """A quality spec from a mapping (already read from YAML)."""

    try:
        spec = QualitySpec.model_validate(data)
    except ValidationError as err:
        raise _spec_error(err, source, QualitySpec) from None
    try:
        check_columns(spec.alerts, COLUMNS)  # the metric rows' columns are known up front
    except SpecError as err:
        raise SpecError(err.key, err.message, source) from None
    return spec


def load(path: str | Path) -> QualitySpec:
    """Read and validate the quality spec at ``path`` (an error names its key's line)."""

    data = read_yaml(path, what="spec")
    try:
        return parse(data, None)
    except SpecError as err:
        raise located(err, path) from None


def check_names(
    spec: QualitySpec, registry: SchemaRegistry, before: SchemaRegistry | None = None
) -> None:
    """The streams' messages and event-time fields in ``registry`` (SpecError if not)."""

    resolve(spec, registry)  # type: ignore[arg-type]


def shape_hash(spec: QualitySpec) -> str:
    """What shapes the stored facts and state: streams (topics, message, event time),
    window and business key. Sinks, lateness, triggers and alerts may change in place."""
    import hashlib
    import json

    shape = {
        "kind": "quality",
        "streams": [
            {**stream_identity(s), "event_timestamp_field": s.event_timestamp_field}
            for s in spec.streams
        ],
        "window_ms": spec.window_ms,
        "business_key": spec.business_key,
    }
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
