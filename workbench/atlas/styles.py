"""Basemap styles by name. ``none`` (the default) draws no basemap and fetches nothing, so a
map works with no network; ``light`` and ``dark`` are CARTO's Positron and Dark Matter
(tiles from the internet); ``satellite`` needs a Mapbox or MapTiler key.

``WORKBENCH_MAP_STYLE`` sets the default style. Keys come from ``MAPBOX_API_KEY`` (or
deck.gl's ``MapboxAccessToken``) and ``MAPTILER_API_KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from workbench.atlas.errors import AtlasError
from workbench.exceptions import SetupError, did_you_mean

CARTO = "https://basemaps.cartocdn.com/gl/{}-gl-style/style.json"
MAPTILER_SATELLITE = "https://api.maptiler.com/maps/satellite/style.json?key={}"


@dataclass(frozen=True)
class Basemap:
    """What pydeck's Deck needs: ``map_provider`` and ``map_style`` (None: no basemap)."""

    provider: str | None
    style: str | None
    mapbox_key: str | None = None
    background: str = "#f4f4f2"

    @property
    def online(self) -> bool:
        return self.provider is not None


def _none() -> Basemap:
    return Basemap(None, None)


def _light() -> Basemap:
    return Basemap("carto", CARTO.format("positron"))


def _dark() -> Basemap:
    return Basemap("carto", CARTO.format("dark-matter"), background="#1b1b1d")


def _satellite() -> Basemap:
    mapbox = os.environ.get("MapboxAccessToken") or os.environ.get("MAPBOX_API_KEY")  # noqa: SIM112
    if mapbox:
        return Basemap("mapbox", "mapbox://styles/mapbox/satellite-v9", mapbox_key=mapbox)
    maptiler = os.environ.get("MAPTILER_API_KEY")
    if maptiler:
        return Basemap("carto", MAPTILER_SATELLITE.format(maptiler))
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
    return os.environ.get("WORKBENCH_MAP_STYLE", "none")


def basemap(style: str | None) -> Basemap:
    """The basemap of a style name (None: the default style)."""
    name = (style or default_style()).lower()
    if name not in STYLES:
        raise AtlasError(f"Unknown map style '{style}'.{did_you_mean(name, STYLES)}")
    return STYLES[name]()
