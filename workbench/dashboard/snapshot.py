"""What the dashboard shows at one moment, read from a store: the latest window's value
per cell of the city (the map) and the city's total per window (the time series)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from workbench.atlas import cells
from workbench.atlas.areas import ServiceArea
from workbench.atlas.errors import AtlasError
from workbench.dashboard.errors import StoreEmptyError
from workbench.dashboard.stores import Query, Store

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Snapshot:
    metric: str
    area: ServiceArea
    service: str | None
    window: datetime  # end of the latest window
    cells: pd.DataFrame  # s2_id, <metric>: the latest window, services summed
    series: list[tuple[datetime, float]]  # (window end, the area's total)


def take(
    store: Store,
    metric: str,
    area: ServiceArea,
    service: str | None = None,
    hours: float = 6.0,
    ahead_minutes: float = 15.0,
    now: datetime | None = None,
) -> Snapshot:
    """Read ``metric`` for the last ``hours`` and keep the cells inside ``area``."""
    end = (now or datetime.now(UTC)) + timedelta(minutes=ahead_minutes)
    frame = store.read(Query(metric, end - timedelta(hours=hours), end, service))
    inside = {cell for cell in frame["cell"].unique() if _in_area(cell, area)}
    frame = frame[frame["cell"].isin(inside)]
    if frame.empty:
        raise StoreEmptyError(
            store.describe(), f"No '{metric}' results for {area.name} in the last {hours:g} hours."
        )
    totals = frame.groupby("time")["value"].sum().sort_index()
    latest = totals.index[-1]
    latest_cells = frame[frame["time"] == latest].groupby("cell", as_index=False)["value"].sum()
    return Snapshot(
        metric=metric,
        area=area,
        service=service,
        window=latest.to_pydatetime(),
        cells=latest_cells.rename(columns={"cell": "s2_id", "value": metric}),
        series=[(t.to_pydatetime(), float(v)) for t, v in totals.items()],
    )


def _in_area(cell: str, area: ServiceArea) -> bool:
    try:
        return area.contains(*cells.center(cells.to_token(cell)))
    except AtlasError:
        return False
