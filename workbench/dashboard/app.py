"""The city dashboard as ipywidgets: pick a city, a service type and a metric; see the map
of the latest window and the city's time series, refreshed on a timer.

Whatever goes wrong while reading or drawing shows as one friendly sentence in the page
(``.dashboard-message``), never as a traceback; the next refresh tries again.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench.atlas.areas import ServiceArea, service_area
from workbench.atlas.map import choropleth
from workbench.atlas.shared import ensure_loaded
from workbench.dashboard import snapshot
from workbench.dashboard.chart import line_chart
from workbench.dashboard.config import AHEAD_MINUTES, DashboardConfig
from workbench.dashboard.errors import AreaNotAllowedError, StoreEmptyError, StoreError
from workbench.dashboard.stores import Store
from workbench.exceptions import WorkbenchError

if TYPE_CHECKING:
    from workbench.atlas.map import AtlasMap

ALL_SERVICES = "All services"
_STYLE = """<style>
.dashboard-message { padding: 10px 14px; border-radius: 6px; margin: 6px 0; }
.dashboard-message.problem { background: #fff4e5; border: 1px solid #f0b36a; }
.dashboard-message.empty { background: #eef4fb; border: 1px solid #9ec1e6; }
.dashboard-status { color: #666; font-size: 12px; }
</style>"""


class Dashboard:
    """The widgets and their refresh loop; ``widget`` is what a notebook displays."""

    def __init__(self, config: DashboardConfig, store: Store | None = None):
        import ipywidgets as w

        self.config = config
        self.store = store or config.open_store()
        self.allowed = config.allowed_areas()  # a viewer's cities, else every city
        self.area = w.Dropdown(
            options=[(a.name, a.key) for a in self.allowed],
            value=config.first_area().key,
            description="City",
        )
        self.service = w.Dropdown(options=[ALL_SERVICES], description="Service")
        self.metric = w.Dropdown(options=list(config.metrics), description="Metric")
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.message = w.HTML().add_class("dashboard-message-box")
        self.map = w.HTML().add_class("dashboard-map")
        self.chart = w.HTML().add_class("dashboard-chart-box")
        self.status = w.HTML().add_class("dashboard-status")
        controls = w.HBox([self.area, self.service, self.metric, self.refresh_button])
        self.widget = w.VBox(
            [w.HTML(_STYLE), controls, self.message, self.map, self.chart, self.status]
        ).add_class("city-dashboard")
        self._map_digest = ""
        self._last: AtlasMap | None = None  # the map shown
        self._task: asyncio.Task[None] | None = None
        self._updating = False
        for control in (self.area, self.service, self.metric):
            control.observe(self._changed, names="value")
        self.refresh_button.on_click(lambda _: self.refresh())

    @classmethod
    def from_config(cls, path: str | None = None, **overrides: Any) -> Dashboard:
        return cls(DashboardConfig.load(path, **overrides))

    def refresh(self) -> bool:
        """Read the store and redraw; True when the map and chart show fresh data."""
        try:
            self._load_choices()
            shot = self._snapshot()
            self._draw(shot)
        except StoreEmptyError as err:
            self._problem(str(err), "empty")
            return False
        except WorkbenchError as err:
            self._problem(str(err), "problem")
            return False
        except Exception as err:  # noqa: BLE001 - a dashboard shows, never raises
            self._problem(f"The dashboard could not draw ({type(err).__name__}: {err}).", "problem")
            return False
        self.message.value = ""
        return True

    def start(self) -> Dashboard:
        """Refresh now, then every ``refresh_seconds`` on the kernel's event loop."""
        self.refresh()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = asyncio.get_event_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._every())
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        ensure_loaded()  # deck.gl once for the page (Voila's template loads it itself)
        display(self.widget)

    async def _every(self) -> None:
        while True:
            await asyncio.sleep(self.config.refresh_seconds)
            self.refresh()

    def _changed(self, change: dict[str, Any]) -> None:
        if not self._updating:
            self.refresh()

    def _load_choices(self) -> None:
        """Fill the metric and service lists from the store (once it answers)."""
        self._updating = True
        try:
            if not self.metric.options:
                metrics = self.store.metrics()
                if not metrics:
                    raise StoreEmptyError(
                        self.store.describe(),
                        f"No results in measurement '{self.config.measurement}' yet "
                        f"({self.store.describe()}).",
                    )
                self.metric.options = metrics
                self.metric.value = metrics[0]
            if len(self.service.options) == 1:
                self.service.options = [ALL_SERVICES, *self.store.services()]
        finally:
            self._updating = False

    def _snapshot(self) -> snapshot.Snapshot:
        service = None if self.service.value == ALL_SERVICES else self.service.value
        return snapshot.take(
            self.store,
            str(self.metric.value),
            self._area(str(self.area.value)),
            service,
            hours=self.config.hours,
            ahead_minutes=AHEAD_MINUTES,
        )

    def _area(self, key: str) -> ServiceArea:
        """The area to read: refused unless allowed (not only missing from the picker)."""
        area = service_area(key)
        if area not in self.allowed:
            raise AreaNotAllowedError(key, [a.name for a in self.allowed])
        return area

    def _draw(self, shot: snapshot.Snapshot) -> None:

        who = shot.service or "all services"
        title = f"{shot.metric} · {shot.area.name} · {who}"
        drawn = choropleth(
            shot.cells,
            cell="s2_id",
            metric=shot.metric,
            service_area=shot.area,
            style=self.config.style,
            title=title,
            height=520,
        )
        drawn.notes.append(f"window ending {shot.window:%H:%M} UTC")
        self._last = drawn
        page = drawn.iframe()
        digest = hashlib.sha1(page.encode()).hexdigest()
        if digest != self._map_digest:  # a map redraw costs a second: send it only when new
            self.map.value, self._map_digest = page, digest
        self.chart.value = line_chart(shot.series, f"{shot.metric} per minute in {shot.area.name}")
        now = datetime.now(UTC)
        self.status.value = (
            f"{html.escape(self.store.describe())} · updated {now:%H:%M:%S} UTC · "
            f"refreshes every {self.config.refresh_seconds:g}s"
        )

    def _problem(self, text: str, kind: str) -> None:
        # map and chart go first: a page that shows the message shows no stale map
        self.map.value, self._map_digest, self._last = "", "", None
        self.chart.value = ""
        self.message.value = f'<div class="dashboard-message {kind}">{html.escape(text)}</div>'
        self.status.value = f"checked {datetime.now(UTC):%H:%M:%S} UTC · retrying every " + (
            f"{self.config.refresh_seconds:g}s"
        )


__all__ = ["Dashboard", "StoreError"]
