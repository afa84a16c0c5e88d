"""``choropleth``: S2 cells coloured by a metric, as a deck.gl map with a legend.

    from workbench import atlas
    m = atlas.choropleth(preview.rows, metric="bookings", scale="quantile")
    m                      # shown in a notebook: the lab extension draws it, even with
                           # no kernel (workbench.atlas.mime)
    m.to_html("surge.html")  # a standalone page, deck.gl inlined: opens with no network

Rows are one per cell; several rows of one cell (windows, vehicle types) are summed
first (``agg``), keeping a ``rows`` count. The tooltip shows the row's values. Under the
cells: the bundled land and coastlines, the service areas' outlines and city names
(:mod:`workbench.atlas.layers`), so a map says where it is with no network.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.atlas import areas, assets, cells, frames, layers, mime, scales
from workbench.atlas.areas import ServiceArea, zoom_for
from workbench.atlas.deck import Deck
from workbench.atlas.errors import AtlasError
from workbench.atlas.geography import geography
from workbench.atlas.page import iframe, legend_html, render_page
from workbench.atlas.styles import Basemap, basemap
from workbench.exceptions import SetupError

if TYPE_CHECKING:
    import pandas as pd

#: Cell columns tried, in order, when none is named.
CELL_COLUMNS = ("s2_id", "tag_s2id", "s2id", "s2_token", "s2_cell", "token")
TOKEN, FILL, ELEVATION = "atlas_token", "atlas_fill", "atlas_elevation"
AGGREGATES = ("sum", "mean", "max", "min")
#: A few cells are shown with the city around them, not filling the map.
MAX_FIT_ZOOM = 11.5
_TOOLTIP_STYLE = {"backgroundColor": "#222", "color": "#fff", "fontSize": "12px"}


@dataclass
class AtlasMap:
    """A drawn map: the pydeck Deck, the rows it draws, its scale and legend."""

    deck: Deck
    rows: pd.DataFrame
    metric: str
    scale: scales.Scale
    legend: list[scales.Bin]
    basemap: Basemap
    title: str
    height: int = 560
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # a notebook keeps it as the output's text/plain: short, not the layers' data
        return f"<AtlasMap {self.title!r}: {len(self.rows):,} cells, {self.scale.kind} scale>"

    @property
    def tokens(self) -> list[str]:
        return list(self.rows[TOKEN])

    def html(self, inline: bool = True) -> str:
        """The page: standalone with deck.gl inlined, or (``inline=False``) taking deck.gl
        from the page it is shown in (see :mod:`workbench.atlas.shared`)."""

        note = f"{self.scale.kind} scale · {len(self.rows):,} cells"
        base = self.basemap
        return render_page(
            title=self.title,
            deck_json=self.deck.to_json(),
            tooltip=self.deck.tooltip,
            legend_html=legend_html(self.title, "; ".join([note, *self.notes]), self.legend),
            script=assets.deck_script() if inline else None,
            background=base.background,
            basemap={"name": base.name, "probe": base.probe, "offline": layers.OFFLINE_ONLY},
            extra_css=assets.basemap_css() if base.online else "",
            mapbox_key=base.mapbox_key,
            message="" if len(self.rows) else "no results",
        )

    def to_html(self, path: str | Path) -> Path:
        target = Path(path)
        target.write_text(self.html(), encoding="utf-8")
        return target

    def iframe(self) -> str:
        """The page in an ``<iframe srcdoc>`` for notebooks, ipywidgets.HTML and Voila;
        deck.gl comes from the parent page."""
        return iframe(self.html(inline=False), self.height)

    def _repr_html_(self) -> str:
        return self.iframe()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The notebook output: layer data that the lab extension draws with the deck.gl
        it ships (a saved notebook shows its maps with no kernel), and a small legend as
        ``text/html`` for other front ends."""
        return mime.bundle(self)


def choropleth(
    data: Any,
    *,
    cell: str | None = None,
    metric: str | None = None,
    scale: str = "linear",
    palette: str | Sequence[Any] = scales.DEFAULT_PALETTE,
    elevation: bool | float = False,
    style: str | None = None,
    service_area: str | ServiceArea | None = None,
    tooltip: Sequence[str] | None = None,
    agg: str = "sum",
    title: str | None = None,
    opacity: float = 0.75,
    height: int = 560,
) -> AtlasMap:
    """Colour S2 cells by ``metric``.

    ``data``: pandas or Spark DataFrame, list of dicts, or a preview (``.rows``).
    ``cell``: the column of S2 ids (int64, negative for the top-bit faces, or decimal
    strings) or tokens; default: the first of :data:`CELL_COLUMNS` present. ``metric``:
    a numeric column (default: the first numeric one). ``scale``: linear, log or
    quantile. ``elevation``: True (or the tallest column's metres) extrudes the cells.
    ``style``: none, light, dark or satellite (see :mod:`workbench.atlas.styles`).
    ``service_area``: keep only cells whose centre is in that area (``"jakarta"``).
    ``tooltip``: columns to show (default: all).
    """
    base = basemap(style)
    frame = frames.to_pandas(data)
    cell = cell or _find_cell_column(frame)
    frames.require_columns(frame, [cell], "cell")
    metric = metric or _find_metric(frame, cell)
    frames.require_columns(frame, [metric], "metric")
    if metric not in frames.numeric_columns(frame):
        raise AtlasError(f"Metric column '{metric}' is not numeric ({frame[metric].dtype}).")
    rows = _prepared(frame, cell, metric, agg)
    area = areas.service_area(service_area) if service_area is not None else None
    if area is not None:
        inside = [area.contains(*cells.center(t)) for t in rows[TOKEN]]
        rows = rows.loc[inside]  # .loc: an empty mask keeps the columns
    shown = list(tooltip) if tooltip is not None else [c for c in rows.columns if c != TOKEN]
    frames.require_columns(rows, shown, "tooltip")
    values = [float(v) for v in rows[metric]]
    colour_scale = scales.build(scale, values, scales.palette_colors(palette))
    rows = rows.assign(**{FILL: [[*colour_scale.color(v), 255] for v in values]})
    extrude = elevation is not False and elevation is not None
    if extrude:
        top = max((abs(v) for v in values), default=0.0) or 1.0
        metres = 3000.0 if elevation is True else float(elevation)
        rows = rows.assign(**{ELEVATION: [abs(v) / top * metres for v in values]})
    geography, missing = _geography()
    deck = _deck(rows, shown, base, area, extrude, opacity, geography)
    notes = ([f"area: {area.name}"] if area else []) + missing
    return AtlasMap(
        deck=deck,
        rows=rows,
        metric=metric,
        scale=colour_scale,
        legend=colour_scale.bins(values) if values else [],
        basemap=base,
        title=title or metric,
        height=height,
        notes=notes,
    )


def _find_cell_column(frame: pd.DataFrame) -> str:
    for name in CELL_COLUMNS:
        if name in frame.columns:
            return name
    raise AtlasError(
        f"No S2 cell column: name it with cell=... (looked for {', '.join(CELL_COLUMNS)}; "
        f"the frame has {', '.join(map(str, frame.columns)) or 'no columns'})."
    )


def _find_metric(frame: pd.DataFrame, cell: str) -> str:
    numeric = frames.numeric_columns(frame, exclude=[cell])
    if not numeric:
        raise AtlasError("No numeric column to colour by: name one with metric=...")
    return numeric[0]


def _prepared(frame: pd.DataFrame, cell: str, metric: str, agg: str) -> pd.DataFrame:
    """One row per cell: tokens added, display values, duplicates aggregated."""
    import pandas as pd

    if agg not in AGGREGATES:
        raise AtlasError(f"Unknown agg '{agg}': one of {', '.join(AGGREGATES)}.")
    frame = frame[frame[cell].notna() & frame[metric].notna()]
    tokens = cells.tokens(frame[cell])
    if len(set(tokens)) < len(tokens):
        ids = [frames.display_value(v) for v in frame[cell]]
        grouped = pd.DataFrame({TOKEN: tokens, cell: ids, metric: frame[metric].to_numpy()})
        out = grouped.groupby(TOKEN, sort=True).agg(
            **{cell: (cell, "first"), metric: (metric, agg), "rows": (metric, "size")}
        )
        return out.reset_index().astype({metric: float})
    shown = {c: [frames.display_value(v) for v in frame[c]] for c in frame.columns}
    shown[metric] = [float(v) for v in frame[metric]]
    return pd.DataFrame({TOKEN: tokens, **shown})


def _deck(
    rows: pd.DataFrame,
    shown: list[str],
    base: Basemap,
    area: ServiceArea | None,
    extrude: bool,
    opacity: float,
    geography: dict[str, Any] | None,
) -> Deck:
    import pydeck as pdk

    layer = pdk.Layer(
        "S2Layer",
        id="atlas-cells",
        data=json.loads(rows.to_json(orient="records")),
        get_s2_token=TOKEN,
        get_fill_color=FILL,
        get_line_color=[60, 60, 60, 110],
        line_width_min_pixels=0.5,
        stroked=True,
        filled=True,
        extruded=extrude,
        get_elevation=ELEVATION if extrude else 0,
        pickable=True,
        opacity=opacity,
    )
    lat, lng, zoom = _view(rows, area)
    view = {"latitude": lat, "longitude": lng, "zoom": zoom, "pitch": 45 if extrude else 0}
    tip = "<br/>".join(f"<b>{name}</b>: {{{name}}}" for name in shown)
    drawn = [layer]
    if geography is not None:
        drawn = [*layers.under(base, geography), layer, *layers.over(base, geography, area)]
    return Deck(drawn, view, base, {"html": tip, "style": _TOOLTIP_STYLE})


def _geography() -> tuple[dict[str, Any] | None, list[str]]:
    """The bundled geography, or a note saying how to get it."""

    try:
        return geography(), []
    except SetupError as err:
        return None, [f"no bundled coastlines ({err}); run workbench setup"]


def _view(rows: pd.DataFrame, area: ServiceArea | None) -> tuple[float, float, float]:
    if area is not None:
        return (*area.center, area.zoom())
    points = [cells.center(t) for t in rows[TOKEN]]
    if not points:
        return 0.0, 0.0, 1.0
    lats, lngs = [p[0] for p in points], [p[1] for p in points]
    lat, lng = (min(lats) + max(lats)) / 2, (min(lngs) + max(lngs)) / 2
    fit = zoom_for(max(lngs) - min(lngs) + 0.02, max(lats) - min(lats) + 0.02)
    return lat, lng, min(fit, MAX_FIT_ZOOM)
