"""Atlas maps: S2 ids and tokens, scales and legends, tooltips, and the standalone page
loaded in Debian's Chromium with no network."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
import s2sphere
from geo_reference import s2_id

from workbench import atlas
from workbench.atlas import cells, scales
from workbench.atlas.errors import AtlasError
from workbench.exceptions import SetupError, UnknownNameError

# (place, lat, lng): faces 0-5; faces 4 and 5 have the top bit set (negative as int64)
PLACES = [
    ("Jakarta", -6.1862, 106.8230),
    ("Lagos", 6.45, 3.39),
    ("North pole", 89.5, 10.0),
    ("Honolulu", 21.3, -157.8),
    ("Lima", -12.05, -77.04),
    ("South pole", -89.5, 10.0),
]


def s2_cell(lat, lng, level=13):
    return s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(level)


@pytest.mark.parametrize(("place", "lat", "lng"), PLACES, ids=[p[0] for p in PLACES])
def test_every_form_of_an_id_gives_the_token(place, lat, lng):
    cell = s2_cell(lat, lng)
    token, signed = cell.to_token(), int(s2_id(lat, lng, 13))
    forms = [cell.id(), signed, np.int64(signed), str(signed), token, token.upper()]
    assert [cells.to_token(form) for form in forms] == [token] * len(forms)
    assert cells.token_to_id(token) == cell.id()
    assert cells.level(cell.id()) == 13


def test_high_bit_ids_are_negative_longs():
    cell = s2_cell(-12.05, -77.04)  # Lima: face 4
    assert cell.id() >= 1 << 63
    signed = int(s2_id(-12.05, -77.04, 13))
    assert signed < 0 and cells.signed(cell.id()) == signed
    assert cells.tokens(pd.Series([signed], dtype="int64")) == [cell.to_token()]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (3.344469541378851e18, "float"),
        ("zz", "not an S2 token"),
        (0, "not an S2 cell"),
        ((7 << 61) | 1, "not an S2 cell"),  # face 7
        (None, "not an S2 cell id"),
    ],
)
def test_bad_cell_values_say_why(value, words):
    with pytest.raises(AtlasError, match=words):
        cells.to_token(value)


SCALE_CASES = [
    # (title, kind, values, colours, expected edges, expected counts per bin)
    ("linear: equal widths", "linear", [0, 10, 20, 30, 40], 4, [0, 10, 20, 30, 40], [1, 1, 1, 2]),
    ("linear: fractions", "linear", [0.5, 1.0, 2.0], 2, [0.5, 1.25, 2.0], [2, 1]),
    ("quantile: equal counts", "quantile", [1, 2, 3, 4, 5, 6, 7, 100], 4, None, [2, 2, 2, 2]),
    ("log: decades", "log", [1, 10, 100, 1000], 3, [1, 10, 100, 1000], [1, 1, 2]),
    ("counts: whole edges", "linear", [1, 1, 2, 4], 7, [1, 2, 3, 4], [2, 1, 1]),
    ("one value: one bin", "quantile", [5, 5, 5], 4, [5, 5], [3]),
]


@pytest.mark.parametrize(
    ("kind", "values", "n", "edges", "counts"),
    [c[1:] for c in SCALE_CASES],
    ids=[c[0] for c in SCALE_CASES],
)
def test_scales_bin_values(kind, values, n, edges, counts):
    colors = scales.palette_colors("viridis")[:n]
    scale = scales.build(kind, [float(v) for v in values], colors)
    if edges is not None:
        assert list(scale.edges) == pytest.approx(edges)
    bins = scale.bins(values)
    assert [b.count for b in bins] == counts
    assert bins[-1].color == colors[-1]  # the top bin always has the palette's top colour
    assert len(bins) == 1 or bins[0].color == colors[0]


def test_log_scale_needs_positive_values_and_names_are_checked():
    with pytest.raises(AtlasError, match="log scale needs positive values"):
        scales.build("log", [0.0, 5.0], scales.palette_colors("blues"))
    with pytest.raises(AtlasError, match="Did you mean quantile"):
        scales.build("quantil", [1.0], scales.palette_colors("blues"))
    with pytest.raises(AtlasError, match="Did you mean viridis"):
        scales.palette_colors("virdis")


def surge_frame():
    """Surge-like rows in Jakarta (ids as Dagger's S2Id strings) and one in Bandung."""
    points = [(-6.2253, 106.8087), (-6.1862, 106.8230), (-6.2610, 106.8133), (-6.9175, 107.6191)]
    return pd.DataFrame(
        {
            "tag_s2id": [s2_id(lat, lng, 13) for lat, lng in points],
            "tag_vehicle_type": ["BIKE", "CAR", "BIKE", "BIKE"],
            "bookings": [40, 25, 7, 3],
            "window_timestamp": pd.to_datetime(["2026-11-21 05:04:00"] * 4),
        }
    )


def test_choropleth_colours_legend_and_tooltips():
    frame = surge_frame()
    drawn = atlas.choropleth(frame, metric="bookings", scale="linear", palette="ylorrd")
    deck = drawn.deck.to_dict()
    [layer] = deck["layers"]
    assert layer["@@type"] == "S2Layer" and layer["getS2Token"] == "@@=atlas_token"
    assert "mapProvider" not in deck  # no basemap by default
    tokens = [cells.to_token(v) for v in frame["tag_s2id"]]
    assert [row["atlas_token"] for row in layer["data"]] == tokens
    top = scales.palette_colors("ylorrd")[-1]
    assert layer["data"][0]["atlas_fill"] == [*top, 255]  # 40: the highest bin
    assert layer["data"][0]["window_timestamp"] == "2026-11-21 05:04:00"
    assert layer["data"][0]["tag_s2id"] == frame["tag_s2id"][0]
    assert sum(b.count for b in drawn.legend) == 4
    html = drawn.deck.tooltip["html"]
    for column in ("tag_s2id", "tag_vehicle_type", "bookings", "window_timestamp"):
        assert f"<b>{column}</b>: {{{column}}}" in html


def test_service_area_duplicates_elevation_and_inputs():
    frame = surge_frame()
    jakarta = atlas.choropleth(frame, metric="bookings", service_area="Jakarta")
    assert len(jakarta.rows) == 3 and "area: Jakarta" in jakarta.notes
    doubled = atlas.choropleth(pd.concat([frame, frame]), metric="bookings", elevation=True)
    assert sorted(doubled.rows["bookings"]) == [6, 14, 50, 80]
    assert set(doubled.rows["rows"]) == {2}
    deck = doubled.deck.to_dict()
    assert deck["layers"][0]["extruded"] and deck["initialViewState"]["pitch"] == 45

    class Preview:  # anything with .rows maps in one call
        rows = frame

    assert atlas.choropleth(Preview(), metric="bookings").tokens == jakarta.tokens + [
        cells.to_token(frame["tag_s2id"][3])
    ]
    records = frame.to_dict("records")
    assert len(atlas.choropleth(records, metric="bookings").rows) == 4


def test_choropleth_errors_name_the_fix(monkeypatch):
    frame = surge_frame()
    with pytest.raises(UnknownNameError, match="Did you mean bookings"):
        atlas.choropleth(frame, metric="booking")
    with pytest.raises(AtlasError, match="not numeric"):
        atlas.choropleth(frame, metric="tag_vehicle_type")
    with pytest.raises(AtlasError, match="No S2 cell column"):
        atlas.choropleth(frame.rename(columns={"tag_s2id": "where"}), metric="bookings")
    for key in ("MAPBOX_API_KEY", "MapboxAccessToken", "MAPTILER_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(SetupError, match="MAPBOX_API_KEY or MAPTILER_API_KEY"):
        atlas.choropleth(frame, metric="bookings", style="satellite")
    monkeypatch.setenv("MAPTILER_API_KEY", "k123")
    deck = atlas.choropleth(frame, metric="bookings", style="satellite").deck.to_dict()
    assert deck["mapStyle"].endswith("satellite/style.json?key=k123")


def test_spark_frames_with_long_ids(spark):
    lima, jakarta = int(s2_id(-12.05, -77.04, 13)), int(s2_id(-6.2, 106.8, 13))
    frame = spark.createDataFrame([(lima, 3), (jakarta, 5)], "s2_id long, bookings long")
    drawn = atlas.choropleth(frame, metric="bookings")
    assert drawn.tokens == [cells.to_token(lima), cells.to_token(jakarta)]


class _Resources(HTMLParser):
    """URLs a page would load: script src, link href, img src, and CSS url(...)."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        for key in ("src", "href"):
            if tag in ("script", "link", "img", "iframe") and found.get(key):
                self.urls.append(found[key])


def test_the_page_references_no_url(tmp_path):
    page = atlas.choropleth(surge_frame(), metric="bookings").to_html(tmp_path / "m.html")
    text = page.read_text()
    parser = _Resources()
    parser.feed(text)
    assert parser.urls == []
    assert "createDeck" in text and "@@=atlas_token" in text
    assert "cdn.jsdelivr" not in text.split("<script>")[0]  # nothing in the head but styles


def test_the_page_draws_in_chromium_offline(chromium, tmp_path):
    frame = surge_frame().iloc[[0]]  # one cell, in the middle of the view
    drawn = atlas.choropleth(frame, metric="bookings", title="bookings per cell")
    page_file = drawn.to_html(tmp_path / "map.html")
    page = chromium.new_page(viewport={"width": 900, "height": 560})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    canvas = page.locator("#deck-container canvas")
    canvas.wait_for(timeout=20_000)
    box = canvas.bounding_box()
    page.wait_for_timeout(500)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = page.locator(".deck-tooltip")
    tooltip.wait_for(state="visible", timeout=10_000)
    assert "bookings: 40" in tooltip.inner_text().replace("\n", " ")
    assert "bookings per cell" in page.inner_text(".atlas-legend")
    page.screenshot(path=str(tmp_path / "map.png"))
    page.close()
    assert errors == []
    assert [u for u in requests if not u.startswith(("file:", "data:", "blob:"))] == []


def test_notebook_display_is_an_iframe_with_the_page():
    drawn = atlas.choropleth(surge_frame(), metric="bookings")
    frame = drawn._repr_html_()
    assert frame.startswith('<iframe class="atlas-frame" srcdoc="')
    assert "createDeck" in frame and "<script>" not in frame  # escaped into the attribute
    assert json.loads(drawn.deck.to_json())["layers"][0]["id"] == "atlas-cells"


def test_assets_deck_bundle_and_basemap_css_from_npm():
    from workbench.atlas import assets

    script = assets.deck_script()
    assert "createDeck" in script and "</script" not in script
    assert "mapbox-gl-js/v1.13.2" in script  # the basemap library the CSS below styles
    css = assets.basemap_css_path()
    assert css.parts[-3:] == ("mapbox-gl-1.13.2", "dist", "mapbox-gl.css")
    assert ".mapboxgl-map" in css.read_text()
    assert assets.fetch_assets() == [assets.deck_bundle_path(), css]  # idempotent
