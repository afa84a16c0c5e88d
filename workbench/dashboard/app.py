"""The city dashboard as ipywidgets: pick a city, a service type and a metric; see the map
of the latest window and the city's time series, refreshed on a timer.

The heading and the window come from the dagger (:mod:`workbench.dashboard.dagger`); times
are on the city's clock with UTC on hover. A city with no results shows its map, empty,
saying ``no results``. Whatever else goes wrong while reading or drawing shows as one
friendly sentence in the page (``.dashboard-message``), never as a traceback and never
with the store's folder or address; the next refresh tries again.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench.atlas.areas import ServiceArea, service_area
from workbench.atlas.map import choropleth
from workbench.atlas.shared import ensure_loaded
from workbench.dashboard import clock, snapshot
from workbench.dashboard.chart import line_chart
from workbench.dashboard.config import AHEAD_MINUTES, DashboardConfig
from workbench.dashboard.dagger import DaggerFacts, window_label
from workbench.dashboard.errors import AreaNotAllowedError, StoreEmptyError, StoreError
from workbench.dashboard.stores import Store
from workbench.exceptions import WorkbenchError

if TYPE_CHECKING:
    from workbench.atlas.map import AtlasMap

ALL_SERVICES = "All services"
_log = logging.getLogger(__name__)
_STYLE = """<style>
.dashboard-message { padding: 10px 14px; border-radius: 6px; margin: 6px 0; }
.dashboard-message.problem { background: #fff4e5; border: 1px solid #f0b36a; }
.dashboard-message.empty { background: #eef4fb; border: 1px solid #9ec1e6; }
.dashboard-status { color: #666; font-size: 12px; }
.dashboard-heading h2 { margin: 4px 0 2px; font-size: 20px; }
.dashboard-heading p { margin: 0 0 6px; color: #444; }
</style>"""


class Dashboard:
    """The widgets and their refresh loop; ``widget`` is what a notebook displays."""

    def __init__(self, config: DashboardConfig, store: Store | None = None):
        import ipywidgets as w

        self.config = config
        self.store = store or config.open_store()
        self.facts, self._spec_problem = _facts(config.dagger)
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
        heading = w.HTML(_heading(self.facts)).add_class("dashboard-heading")
        self.widget = w.VBox(
            [w.HTML(_STYLE), heading, controls, self.message, self.map, self.chart, self.status]
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
        if self._spec_problem:
            self._problem(self._spec_problem, "problem")
            return False
        try:
            self._load_choices()
            shot = self._snapshot()
            self._draw(shot)
        except StoreEmptyError:
            try:
                self._draw_empty()
            except WorkbenchError as err:
                self._problem(self._public(str(err)), "problem")
            return False
        except WorkbenchError as err:
            self._problem(self._public(str(err)), "problem")
            return False
        except Exception as err:  # noqa: BLE001 - a dashboard shows, never raises
            text = f"The dashboard could not draw ({type(err).__name__}: {err})."
            self._problem(self._public(text), "problem")
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
        times = [t for t, _ in shot.series]
        window = self.facts.window_in(times)
        drawn = self._map(shot.metric, shot.area, shot.service, shot.cells)
        zone = shot.area.zone
        drawn.notes.append(
            f"{window_label(window)} window ending {clock.local(shot.window, zone)} "
            f"{clock.zone_name(zone, shot.window)} ({clock.utc(shot.window, '%H:%M')})"
        )
        self._show(drawn)
        self.chart.value = self._chart(shot.metric, shot.area, shot.series, window)
        self._status(zone)

    def _draw_empty(self) -> None:
        """The city's map with no cells, saying ``no results``, and an empty chart."""
        import pandas as pd

        area = self._area(str(self.area.value))
        metric = str(self.metric.value or (self.config.metrics or ["results"])[0])
        service = None if self.service.value == ALL_SERVICES else str(self.service.value)
        none = pd.DataFrame({"s2_id": pd.Series([], dtype=str), metric: pd.Series([], dtype=float)})
        drawn = self._map(metric, area, service, none)
        drawn.notes.append(f"no results in the last {self.config.hours:g} hours")
        self._show(drawn)
        self.chart.value = self._chart(metric, area, [], self.facts.window)
        self.message.value = ""
        self._status(area.zone)

    def _map(self, metric: str, area: ServiceArea, service: str | None, cells: Any) -> AtlasMap:
        return choropleth(
            cells,
            cell="s2_id",
            metric=metric,
            service_area=area,
            style=self.config.style,
            title=f"{metric} · {area.name} · {service or 'all services'}",
            height=520,
        )

    def _show(self, drawn: AtlasMap) -> None:
        self._last = drawn
        page = drawn.iframe()
        digest = hashlib.sha1(page.encode()).hexdigest()
        if digest != self._map_digest:  # a map redraw costs a second: send it only when new
            self.map.value, self._map_digest = page, digest

    def _chart(self, metric: str, area: ServiceArea, series: Any, window: Any) -> str:
        per = f"{metric} per {window_label(window)}"
        title = f"{per} in {area.name}, all its cells"
        return line_chart(series, title, per, area.zone, window)

    def _status(self, zone: Any) -> None:
        now = datetime.now(UTC)
        whose = f"{html.escape(self.facts.title)} · " if self.facts.title else ""
        self.status.value = (
            f"{whose}updated {clock.time_html(now, zone, '%H:%M:%S')}"
            f" · refreshes every {self.config.refresh_seconds:g}s"
        )

    def _public(self, text: str) -> str:
        """``text`` without the store's folder or address: viewers see neither."""
        described = self.store.describe()
        text = text.replace(described, described.split(" ")[0])
        for address in (getattr(self.store, "path", None), getattr(self.store, "url", None)):
            if address:
                text = text.replace(f" {address}", "").replace(str(address), "")
        return text

    def _problem(self, text: str, kind: str) -> None:
        # map and chart go first: a page that shows the message shows no stale map
        self.map.value, self._map_digest, self._last = "", "", None
        self.chart.value = ""
        self.message.value = f'<div class="dashboard-message {kind}">{html.escape(text)}</div>'
        area = service_area(str(self.area.value))
        checked = clock.time_html(datetime.now(UTC), area.zone, "%H:%M:%S")
        self.status.value = f"checked {checked} · retrying every {self.config.refresh_seconds:g}s"


def _facts(spec: str) -> tuple[DaggerFacts, str]:
    """The dagger's facts, or none and what the page says (its log says why: viewers see
    no server path)."""
    try:
        return DaggerFacts.load(spec), ""
    except WorkbenchError as err:
        _log.warning("The dashboard's dagger spec: %s", err)
        return DaggerFacts(), "The dashboard's dagger spec cannot be read: its log says why."


def _heading(facts: DaggerFacts) -> str:
    if not facts.title:
        return ""
    about = f"<p>{html.escape(facts.description)}</p>" if facts.description else ""
    return f"<h2>{html.escape(facts.title)}</h2>{about}"


__all__ = ["Dashboard", "StoreError"]
