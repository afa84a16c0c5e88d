"""Maps in a saved notebook, reopened in JupyterLab with no kernel: the lab extension draws
them from the notebook's outputs (deck.gl shipped in the extension), and the notebook keeps
only the layer data. The screenshot goes to ``artifacts/lab/lab-maps-no-kernel.png``."""

from __future__ import annotations

import io
import json

import nbformat
import pytest
import requests
from labkit import ARTIFACTS, as_user, start_lab
from services_browser import recorded_page
from test_extension import stop_jupyter

from workbench.atlas.mime import MIME_TYPE

pytestmark = pytest.mark.lab

#: a 12 x 12 grid of level-13 cells over central Jakarta, values 1..144
GRID = """\
import pandas as pd
import s2sphere
from workbench import atlas

def cell(lat, lng):
    return s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(13).id()

ids = sorted({cell(-6.30 + i * 0.012, 106.74 + j * 0.012) for i in range(12) for j in range(12)})
frame = pd.DataFrame({"s2_id": ids, "bookings": range(1, len(ids) + 1)})"""
MAPS = [
    'atlas.choropleth(frame, metric="bookings", service_area="jakarta")',
    'atlas.choropleth(frame, metric="bookings", scale="quantile", style="dark")',
]
#: what a map's output may add to its cells' data: the land and city names around the
#: view, the service areas, the legend (measured: about 10 kB)
PER_MAP_BYTES = 16_000
RED = (177, 0, 38)  # the palette's top bin (YlOrRd)


@pytest.fixture(scope="module")
def saved_notebook(workbench_kernel, tmp_path_factory):
    """The notebook run by papermill in a real kernel and saved, then set to a kernel that
    is not installed here: JupyterLab opens it with none."""
    import papermill

    folder = tmp_path_factory.mktemp("maps-lab")
    code = nbformat.v4.new_code_cell
    source, out = folder / "source.ipynb", folder / "maps.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[code(GRID), *map(code, MAPS)]), str(source))
    papermill.execute_notebook(
        str(source), str(out), kernel_name=workbench_kernel, progress_bar=False,
        execution_timeout=300,
    )  # fmt: skip
    saved = nbformat.read(str(out), as_version=4)
    saved.metadata.kernelspec = {"name": "not-installed", "display_name": "Gone", "language": ""}
    nbformat.write(saved, str(out))
    source.unlink()
    return out


def map_outputs(path):
    cells = nbformat.read(str(path), as_version=4).cells
    return [o["data"] for c in cells for o in c.outputs if MIME_TYPE in o.get("data", {})]


def test_the_saved_notebook_keeps_layer_data_only(saved_notebook):
    outputs = map_outputs(saved_notebook)
    assert len(outputs) == 2
    decks = [json.loads(o[MIME_TYPE]["deck"]) for o in outputs]
    cells = [layer["data"] for deck in decks for layer in deck["layers"]]
    cells = [data for data in cells if isinstance(data, list) and data and "bookings" in data[0]]
    assert [len(c) for c in cells] == [144, 144]
    data_bytes = sum(len(json.dumps(c)) for c in cells)
    size = saved_notebook.stat().st_size
    assert size < 1.2 * data_bytes + len(outputs) * PER_MAP_BYTES, (size, data_bytes)
    text = saved_notebook.read_text()
    assert "<script" not in text and "deck.gl v" not in text and "createDeck" not in text


def test_a_saved_notebook_shows_its_maps_with_no_kernel(saved_notebook, chromium):
    from PIL import Image

    server = start_lab(saved_notebook.parent)
    try:
        page = recorded_page(chromium, width=1400, height=1000, headers=as_user("alice"))
        page.goto(f"{server.url}lab/workspaces/maps/tree/{saved_notebook.name}")
        page.wait_for_selector(".jp-Dialog:has-text('Select Kernel')")
        page.click(".jp-Dialog button:has-text('No Kernel')")
        maps = page.locator(".dw-map-output")
        maps.nth(1).locator("canvas").wait_for(timeout=60_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.dw-map-output canvas')]"
            ".every(c => c.width > 100 && c.height > 100)"
        )
        page.wait_for_load_state("networkidle")
        first = maps.first
        first.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)  # deck.gl's first frames after the scroll
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        first.screenshot(path=str(ARTIFACTS / "lab-maps-no-kernel.png"))
        shot = Image.open(io.BytesIO(first.locator(".dw-map-canvas").screenshot())).convert("RGB")
        legend = first.locator(".dw-map-legend").inner_text()
        kernels = requests.get(server.url + "api/kernels", headers=as_user("alice"), timeout=10)
        assert kernels.json() == []  # nothing ran: the page drew the saved outputs
        assert page.problems == [], page.problems
        assert [u for u in page.requests if not u.startswith("http://127.0.0.1")] == []
    finally:
        stop_jupyter(server)
    colours = shot.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # not a blank canvas
    counts = {rgb: n for n, rgb in colours}
    land = sum(n for rgb, n in counts.items() if near(rgb, (246, 243, 236), 4))
    red = sum(n for rgb, n in counts.items() if near(rgb, RED, 40))
    assert land > 2_000 and red > 200, (land, red)
    assert "bookings" in legend and "144 cells" in legend and "area: Jakarta" in legend


def near(colour, expected, tolerance):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected, strict=True))
