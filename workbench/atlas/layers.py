"""The layers every map draws around its cells: the bundled land (coastlines and country
borders) under them, the service areas' outlines, and city names on top.

Layer ids in :data:`OFFLINE_ONLY` stand in for a basemap: the page drops them when a
basemap style loads (it has its own land and names).
"""

from __future__ import annotations

from typing import Any

from workbench.atlas.areas import ServiceArea, service_areas
from workbench.atlas.styles import Basemap

LAND_ID, AREAS_ID, PLACES_ID = "atlas-land", "atlas-areas", "atlas-places"
OFFLINE_ONLY = (LAND_ID, PLACES_ID)

_LIGHT: dict[str, Any] = {
    "land": [246, 243, 236],
    "coast": [120, 140, 160],
    "text": [40, 40, 48],
    "halo": 255,
}
_DARK: dict[str, Any] = {
    "land": [52, 54, 60],
    "coast": [110, 130, 150],
    "text": [235, 235, 240],
    "halo": 20,
}


def under(base: Basemap, geography: dict[str, Any]) -> list[Any]:
    """The land layer, drawn first."""
    import pydeck as pdk

    colors = _DARK if base.dark else _LIGHT
    return [
        pdk.Layer(
            "GeoJsonLayer",
            id=LAND_ID,
            data=geography["land"],
            filled=True,
            stroked=True,
            get_fill_color=colors["land"],
            get_line_color=colors["coast"],
            line_width_min_pixels=1,
            pickable=False,
        )
    ]


def over(base: Basemap, geography: dict[str, Any], chosen: ServiceArea | None) -> list[Any]:
    """Service-area outlines (the chosen one stronger) and city names, drawn last."""
    import pydeck as pdk

    colors = _DARK if base.dark else _LIGHT
    outlines = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": area.name, "chosen": area.key == getattr(chosen, "key", "")},
                "geometry": {"type": "Polygon", "coordinates": [_box(area)]},
            }
            for area in service_areas().values()
        ],
    }
    halo = colors["halo"]
    return [
        pdk.Layer(
            "GeoJsonLayer",
            id=AREAS_ID,
            data=outlines,
            filled=False,
            stroked=True,
            get_line_color=[*colors["text"], 160],
            get_line_width="properties.chosen ? 2.5 : 1.2",
            line_width_units="'pixels'",  # pydeck: a quoted string stays a string
            pickable=False,
        ),
        pdk.Layer(
            "TextLayer",
            id=PLACES_ID,
            data=geography["places"],
            get_position="[lng, lat]",
            get_text="name",
            get_size="population > 1000000 ? 15 : 12",
            get_color=colors["text"],
            font_family="'Helvetica, Arial, sans-serif'",
            font_weight=600,
            background=True,
            get_background_color=[halo, halo, halo, 170],
            background_padding=[3, 1],
            get_text_anchor="'middle'",
            get_alignment_baseline="'center'",
            pickable=False,
        ),
    ]


def _box(area: ServiceArea) -> list[list[float]]:
    corners = [(area.west, area.south), (area.east, area.south), (area.east, area.north)]
    return [list(p) for p in [*corners, (area.west, area.north), (area.west, area.south)]]
