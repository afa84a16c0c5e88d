"""Chaos scenarios as YAML files: a hypothesis and cases, each a fault under a load.

A scenario file (every duration as in specs: ``20s``, ``500ms``, ``2m``)::

    name: broker-kill-under-load
    description: The surge dagger rides out a broker crash.
    hypothesis: No window is lost or doubled; the dagger catches up within 60s.
    job: surge-pricing            # the dagger under test (blast radius: job)
    control: true                 # first a run of the same load without faults
    recovery_timeout: 120s        # how long after a fault's revert the probes may wait
    cases:
      - name: kill-the-broker
        blast_radius: job         # job | team (the scenario's) | cluster (the case's)
        cluster: local            # with blast_radius: cluster
        type: kafka               # kafka | spark | sink | network
        fault: broker_kill        # a name in workbench.chaos.faults
        params: {}                # the fault's own settings (latency_ms, loss, ...)
        start_after: 5s           # into the load
        downtime: 20s             # how long the fault stays before it is reverted
        load: {topic: booking-log, message: bookings, rate: 200, duration: 40s, seed: 7}
    ledger:                       # optional: the dagger's sink(s), for the verdict
      parquet: /data/surge        # or influx: {url, database, measurement}; a list for several
      time_column: window_timestamp
      marks: end                  # the column holds each window's end (start: its start)
      count_column: bookings      # None: one row per record
      window: 1m
      watermark_delay: 10s

:func:`load_scenario` reads and checks a file; errors name the key and the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from workbench.chaos.faults import FAULTS
from workbench.durations import to_millis
from workbench.exceptions import SpecError, did_you_mean
from workbench.yamlsafe import read_yaml


def _seconds(value: Any) -> float:
    try:
        return to_millis(value) / 1000.0
    except ValueError as err:
        raise ValueError(str(err)) from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Load(_Strict):
    """``rate`` events per second of ``message`` on ``topic`` for ``duration``."""

    topic: str
    message: str
    rate: float = Field(gt=0)
    duration: float
    seed: int = 42
    partitions: int = Field(default=3, ge=1)
    malformed: float = Field(default=0.0, ge=0.0, le=1.0)

    _duration = field_validator("duration", mode="before")(_seconds)

    def plan(self):
        from workbench.chaos.load import LoadPlan

        return LoadPlan(
            self.topic, self.message, self.rate, self.duration, self.seed, self.partitions,
            self.malformed,
        )  # fmt: skip


class Case(_Strict):
    """One fault under one load: applied ``start_after`` into the load, reverted after
    ``downtime``."""

    name: str
    blast_radius: Literal["job", "team", "cluster"] = "job"
    cluster: str | None = None
    type: Literal["kafka", "spark", "sink", "network"]
    fault: str
    params: dict[str, Any] = Field(default_factory=dict)
    start_after: float = 5.0
    downtime: float
    load: Load

    _durations = field_validator("start_after", "downtime", mode="before")(_seconds)

    @field_validator("fault")
    @classmethod
    def _known(cls, value: str) -> str:

        if value not in FAULTS.names():
            raise ValueError(f"no fault '{value}'.{did_you_mean(value, FAULTS.names())}")
        return value


class InfluxSink(_Strict):
    """An InfluxDB 1.x sink (v1 API): each point of ``measurement`` is a row, its time the
    row's window (``marks``), its field ``count_column`` the count."""

    url: str
    database: str
    measurement: str


class LedgerSpec(_Strict):
    """Where the dagger under test writes, for the ledger: its Parquet sink folder or its
    InfluxDB sink (``influx``, one of the two), the column holding each row's window
    (``marks``: its ``start`` or its ``end``, as ``TUMBLE_END(...) AS window_timestamp``
    does; an InfluxDB point's time is that column), the column holding a count per row
    (None: each row is one record), a key column of a per-record sink (each key landed
    twice in a window is listed), the dagger's dead-letter Parquet folder (its letters
    of the loads' topics, windowed by their Kafka timestamp), the window and the
    watermark delay (windows the watermark has not passed when the last load ends are
    left out), and how long to wait for the sink to hold every closed window."""

    parquet: str | None = None
    influx: InfluxSink | None = None
    time_column: str = "window_timestamp"
    marks: Literal["start", "end"] = "end"
    count_column: str | None = None
    key_column: str | None = None
    dead_letters: str | None = None
    window: float
    watermark_delay: float = 0.0
    wait: float = 120.0

    _durations = field_validator("window", "watermark_delay", "wait", mode="before")(_seconds)

    @model_validator(mode="after")
    def _one_sink(self) -> LedgerSpec:
        if (self.parquet is None) == (self.influx is None):
            raise ValueError("a ledger reads one sink: give 'parquet' (a folder) or 'influx'")
        return self

    def describe(self) -> str:
        if self.influx is not None:
            return f"influx {self.influx.url} {self.influx.database}/{self.influx.measurement}"
        return f"parquet {self.parquet}"


class Scenario(_Strict):
    name: str
    description: str = ""
    hypothesis: str = ""
    job: str | None = None
    team: str | None = None
    control: bool = True
    recovery_timeout: float = 120.0
    cases: list[Case] = Field(min_length=1)
    ledger: LedgerSpec | list[LedgerSpec] | None = None

    _timeout = field_validator("recovery_timeout", mode="before")(_seconds)

    @property
    def ledgers(self) -> list[LedgerSpec]:
        """The sinks to balance (one ledger each)."""
        if self.ledger is None:
            return []
        return self.ledger if isinstance(self.ledger, list) else [self.ledger]


def load_scenario(path: str | Path) -> Scenario:
    """The scenario in the YAML file at ``path``; a :class:`SpecError` naming the key."""

    data = read_yaml(path, what="chaos scenario")
    if not isinstance(data, dict):
        raise SpecError("(top)", "expected a YAML mapping (name, cases...)", str(path))
    try:
        return Scenario(**data)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise SpecError(key, first["msg"].removeprefix("Value error, "), str(path)) from None
