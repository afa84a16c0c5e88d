"""Basemap styles by name. ``none`` (the default) draws no basemap and fetches nothing, so a
map works with no network; ``light`` and ``dark`` are CARTO's Positron and Dark Matter
(tiles from the internet); ``satellite`` needs a Mapbox or MapTiler key.

Every map draws the bundled geography (:mod:`workbench.atlas.geography`) under its cells.
With a basemap style, the page first asks for the style (``probe``); when that fails (no
network, a bad key) it keeps the bundled geography and says so on the map.

``WORKBENCH_MAP_STYLE`` sets the default style. Keys come from ``MAPBOX_API_KEY`` (or
deck.gl's ``MapboxAccessToken``) and ``MAPTILER_API_KEY``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workbench.atlas.errors import AtlasError
from workbench.exceptions import SetupError, did_you_mean
from workbench.settings import settings

CARTO = "https://basemaps.cartocdn.com/gl/{}-gl-style/style.json"
MAPTILER_SATELLITE = "https://api.maptiler.com/maps/satellite/style.json?key={}"


@dataclass(frozen=True)
class Basemap:
    """What pydeck's Deck needs: ``map_provider`` and ``map_style`` (None: no basemap)."""

    provider: str | None
    style: str | None
    mapbox_key: str | None = None
    name: str = "none"
    dark: bool = False

    @property
    def online(self) -> bool:
        return self.provider is not None

    @property
    def probe(self) -> str | None:
        """A URL that answers when the style can load (the style document itself)."""
        if self.style and self.style.startswith("mapbox://styles/"):
            path = self.style.removeprefix("mapbox://styles/")
            return f"https://api.mapbox.com/styles/v1/{path}?access_token={self.mapbox_key}"
        return self.style

    @property
    def background(self) -> str:
        """The sea: what shows where the bundled land is not drawn."""
        return "#1d2733" if self.dark else "#d7e5f0"


def _none() -> Basemap:
    return Basemap(None, None)


def _light() -> Basemap:
    return Basemap("carto", CARTO.format("positron"), name="light")


def _dark() -> Basemap:
    return Basemap("carto", CARTO.format("dark-matter"), name="dark", dark=True)


def _satellite() -> Basemap:
    mapbox = settings().mapbox_key
    if mapbox:
        return Basemap(
            "mapbox", "mapbox://styles/mapbox/satellite-v9", mapbox_key=mapbox, name="satellite"
        )
    maptiler = settings().maptiler_key
    if maptiler:
        return Basemap("carto", MAPTILER_SATELLITE.format(maptiler), name="satellite")
    raise SetupError(
        "The satellite style needs a Mapbox or MapTiler key: set MAPBOX_API_KEY or "
        "MAPTILER_API_KEY, or use style='light', 'dark' or 'none'."
    )


STYLES: dict[str, Callable[[], Basemap]] = {
    "none": _none,
    "light": _light,
    "dark": _dark,
    "satellite": _satellite,
}


def default_style() -> str:
    return settings().map_style


def basemap(style: str | None) -> Basemap:
    """The basemap of a style name (None: the default style)."""
    name = (style or default_style()).lower()
    if name not in STYLES:
        raise AtlasError(f"Unknown map style '{style}'.{did_you_mean(name, STYLES)}")
    return STYLES[name]()
