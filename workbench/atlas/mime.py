"""A map as a notebook output: the mime bundle JupyterLab draws with no kernel.

A map's output is ``application/vnd.dagger-workbench.map+json`` (:data:`MIME_TYPE`): the
deck.gl JSON of its layers as one string (a notebook file writes JSON arrays one number a
line: three times the size) (cells with their values, the service areas, the city names and
the land around the view), its tooltip and its legend; no JavaScript. The Dagger Workbench
lab extension draws it with the deck.gl it ships, so a saved notebook shows its maps when
reopened, before (or without) any kernel. Other front ends get a small ``text/html``: the
legend and a sentence saying where the map shows.

The land and city names are cut to :data:`LAND_SPAN` views around the map's view and rounded to
:data:`LAND_DIGITS` decimals, so a map's output stays a few kB plus its cells.
"""

from __future__ import annotations

import html
import json
import math
from typing import TYPE_CHECKING, Any

from workbench.atlas import cells, layers
from workbench.atlas.geography import Region, clip_polygons
from workbench.atlas.page import legend_html, range_html
from workbench.atlas.scales import hex_color

if TYPE_CHECKING:
    from workbench.atlas.map import AtlasMap

MIME_TYPE = "application/vnd.dagger-workbench.map+json"
VERSION = 1
#: The land kept: this many view widths, centred on the view (panning a little keeps land).
LAND_SPAN = 2.0
#: The widest view the land is cut for, in pixels (a wide screen).
VIEW_WIDTH_PX = 1200
CELL_DIGITS = 6  # 1e-6 degrees: about 11 cm
POLYGON = "atlas_polygon"
LAND_DIGITS = 3  # 1e-3 degrees: about 110 m, under a pixel at city zoom
FALLBACK = (
    "An interactive map: open this notebook in JupyterLab with the Dagger Workbench "
    "extension, or save it as a page with <code>.to_html(path)</code>."
)


def bundle(drawn: AtlasMap) -> dict[str, Any]:
    """The map's mime bundle: the layer data for the lab extension, a legend for others."""
    return {MIME_TYPE: payload(drawn), "text/html": fallback_html(drawn)}


def payload(drawn: AtlasMap) -> dict[str, Any]:
    deck = drawn.deck.to_dict()
    deck.pop("mapProvider", None)
    deck.pop("mapStyle", None)
    view = deck["initialViewState"]
    deck["layers"] = [_polygons(_cut(layer, _around(view))) for layer in deck["layers"]]
    return {
        "version": VERSION,
        # one line of text: a notebook file indents JSON, one number a line
        "deck": json.dumps(deck, separators=(",", ":")),
        "tooltip": drawn.deck.tooltip,
        "background": drawn.basemap.background,
        "height": drawn.height,
        "legend": {
            "title": drawn.title,
            "note": "; ".join([_scale_note(drawn), *_notes(drawn)]),
            "bins": [
                {"color": hex_color(b.color), "label": label, "count": b.count}
                for b, label in zip(drawn.legend, _labels(drawn), strict=True)
            ],
        },
    }


def fallback_html(drawn: AtlasMap) -> str:
    legend = legend_html(drawn.title, _scale_note(drawn), drawn.legend)
    return f'<div class="atlas-fallback">{legend}<p>{FALLBACK}</p></div>'


def _scale_note(drawn: AtlasMap) -> str:
    return f"{drawn.scale.kind} scale · {len(drawn.rows):,} cells"


def _notes(drawn: AtlasMap) -> list[str]:
    if drawn.basemap.provider:
        return [*drawn.notes, f'basemap "{drawn.basemap.name}" only in .to_html()']
    return drawn.notes


def _labels(drawn: AtlasMap) -> list[str]:
    last = len(drawn.legend) - 1
    return [html.unescape(range_html(b, i == last)) for i, b in enumerate(drawn.legend)]


def _cut(layer: dict[str, Any], region: Region) -> dict[str, Any]:
    """The land and the city names around the view; other layers whole."""
    if layer.get("id") == layers.PLACES_ID:
        return {**layer, "data": [p for p in layer["data"] if region.contains(p["lat"], p["lng"])]}
    if layer.get("id") != layers.LAND_ID:
        return layer
    features = []
    for feature in layer["data"]["features"]:
        polygons = clip_polygons(feature["geometry"]["coordinates"], region, LAND_DIGITS)
        if polygons:
            geometry = {"type": "MultiPolygon", "coordinates": polygons}
            features.append({**feature, "geometry": geometry})
    return {**layer, "data": {"type": "FeatureCollection", "features": features}}


def _polygons(layer: dict[str, Any]) -> dict[str, Any]:
    """The S2 layer as a PolygonLayer of each cell's corners (to :data:`CELL_DIGITS`
    decimals), which the extension draws without an S2 library."""
    if layer.get("@@type") != "S2Layer":
        return layer
    token = layer.pop("getS2Token").removeprefix("@@=")
    rows = [
        {**{k: v for k, v in row.items() if k != token}, POLYGON: _corners(row[token])}
        for row in layer["data"]
    ]
    return {**layer, "@@type": "PolygonLayer", "data": rows, "getPolygon": f"@@={POLYGON}"}


def _corners(token: str) -> list[list[float]]:
    return [[round(x, CELL_DIGITS), round(y, CELL_DIGITS)] for x, y in cells.corners(token)]


def _around(view: dict[str, float]) -> Region:
    """:data:`LAND_SPAN` widths of the widest view at the map's zoom, around its centre."""
    lng_span = 360.0 * VIEW_WIDTH_PX / (512 * 2 ** view["zoom"]) * LAND_SPAN
    lat, lng = view["latitude"], view["longitude"]
    lat_span = lng_span * math.cos(math.radians(lat))
    return Region(
        west=lng - lng_span / 2,
        south=max(-85.0, lat - lat_span / 2),
        east=lng + lng_span / 2,
        north=min(85.0, lat + lat_span / 2),
    )
