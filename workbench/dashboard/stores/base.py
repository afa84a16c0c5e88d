"""What every results store answers: the metrics and service types it holds, and a metric's
points for a time range, as one tidy frame.

A frame has the columns ``time`` (UTC ``datetime64``), ``cell`` (the S2 id as text),
``service`` (the service-type tag, or ``""``) and ``value`` (float). Stores follow the
sinks' layout: InfluxDB points with ``tag_*`` tags (Dagger's convention), VictoriaMetrics
series ``<measurement>_<field>``, Parquet rows partitioned by ``dt``/``hour``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Protocol

from workbench.dashboard.errors import StoreEmptyError

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("time", "cell", "service", "value")


@dataclass(frozen=True)
class Layout:
    """Where a dagger's result keeps what the dashboard shows."""

    measurement: str = "surge"
    cell_column: str = "tag_s2id"
    service_column: str = "tag_vehicle_type"
    time_column: str = "window_timestamp"


@dataclass(frozen=True)
class Query:
    """A metric over ``[start, end)``, optionally one service type only."""

    metric: str
    start: datetime
    end: datetime
    service: str | None = None


class Store(Protocol):
    kind: ClassVar[str]

    def describe(self) -> str: ...

    def metrics(self) -> list[str]:
        """The numeric fields of the measurement."""
        ...

    def services(self) -> list[str]:
        """The service types present."""
        ...

    def read(self, query: Query) -> pd.DataFrame:
        """The metric's points (see :data:`COLUMNS`); :class:`StoreEmptyError` if none."""
        ...


def empty_frame() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            "time": pd.Series([], dtype="datetime64[ns, UTC]"),
            "cell": pd.Series([], dtype=str),
            "service": pd.Series([], dtype=str),
            "value": pd.Series([], dtype=float),
        }
    )


def points_frame(rows: list[tuple], store: str, nothing: str) -> pd.DataFrame:
    """``(epoch ms, cell, service, value)`` rows as a store's frame; none is
    :class:`StoreEmptyError` (``nothing`` says what was looked for)."""
    import pandas as pd

    if not rows:
        raise StoreEmptyError(store, nothing)
    frame = pd.DataFrame(rows, columns=["time", "cell", "service", "value"])
    frame["time"] = pd.to_datetime(frame["time"], unit="ms", utc=True)
    return frame.astype({"value": float})


def rfc3339(moment: datetime) -> str:
    """A UTC timestamp for query languages (a naive datetime is UTC)."""
    from datetime import UTC

    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
