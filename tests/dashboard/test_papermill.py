"""The city dashboard notebook (and its template) run top to bottom through papermill on
the workbench kernel; the widgets they leave show the store's latest window on the map."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from pathlib import Path

import pytest
from surge_results import write_influx_v1

from workbench.atlas.areas import service_area
from workbench.atlas.cells import center, to_token
from workbench.dev.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [ROOT / "notebooks" / "city_dashboard.ipynb", ROOT / "templates" / "dashboard.ipynb"]


def run(notebook: Path, out: Path, kernel: str, store: str):
    import nbformat
    import papermill

    papermill.execute_notebook(
        str(notebook), str(out), parameters={"store": store}, kernel_name=kernel,
        cwd=str(out.parent), progress_bar=False, execution_timeout=300,
    )  # fmt: skip
    nb = nbformat.read(str(out), as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [m["state"].get("value") for m in state.values() if m["model_name"] == "HTMLModel"]


def latest_jakarta_tokens(rows) -> set[str]:
    area = service_area("jakarta")
    now = datetime.now(UTC)
    latest = max(r["window_timestamp"] for r in rows if r["window_timestamp"] <= now)
    tokens = {to_token(r["tag_s2id"]) for r in rows if r["window_timestamp"] == latest}
    return {t for t in tokens if area.contains(*center(t))}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_dashboard_notebook_shows_the_latest_window(
    notebook, influxdb_v1, surge_rows, workbench_kernel, tmp_path
):
    database = write_influx_v1(influxdb_v1, surge_rows)
    values = run(notebook, tmp_path / "out.ipynb", workbench_kernel,
                 f"influx1:{influxdb_v1.url}/{database}")  # fmt: skip
    maps = [v for v in values if v and "<iframe" in v]
    assert len(maps) == 1 and "bookings · Jakarta · all services" in maps[0]
    expected = latest_jakarta_tokens(surge_rows)
    page = html.unescape(maps[0])  # the map page is the iframe's srcdoc
    assert expected and all(f'"{token}"' in page for token in expected)


def test_dashboard_notebook_with_the_store_down_says_so(workbench_kernel, tmp_path):
    down = f"influx1:http://127.0.0.1:{free_port()}/dagger"
    values = run(NOTEBOOKS[0], tmp_path / "out.ipynb", workbench_kernel, down)
    assert any(v and "Cannot reach the results store" in v for v in values)
    assert not any(v and "Traceback" in v for v in values)
