"""A dashboard viewer behind the job service's door, in a real Jupyter server (JupyterLab,
the job service, Voila's server extension) and Chromium: carla (viewer for Bandung) logs
in with her token, the dashboard's city picker lists only Bandung and the map shows it;
she gets 403 on the jobs API and on JupyterLab's pages, and her browser cannot run code
in the dashboard's kernel (alice's browser can); alice (team pricing) sees every city.
No JS errors, no request leaves the machine; screenshots go to ``artifacts/lab/``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from labkit import ARTIFACTS, start_viewer_lab
from servekit import TOKENS
from services_browser import recorded_page
from test_extension import stop_jupyter

from workbench.atlas import cells
from workbench.atlas.areas import service_area
from workbench.dev.ports import free_port
from workbench.dev.timeseries import InfluxServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboard"))  # surge_results
from surge_results import surge_rows, write_influx_v1  # noqa: E402

DASHBOARD = "voila/render/dashboard.ipynb"


def moved_to(rows: list[dict], key: str) -> list[dict]:
    """The generated (Jakarta) rows with each cell moved to the same place in ``key``'s
    box: results for another city."""
    from geo_reference import s2_id

    source, target = service_area("jakarta"), service_area(key)
    out = []
    for row in rows:
        lat, lng = cells.center(cells.to_token(row["tag_s2id"]))
        lat = target.south + (lat - source.south) / (source.north - source.south) * (
            target.north - target.south
        )
        lng = target.west + (lng - source.west) / (source.east - source.west) * (
            target.east - target.west
        )
        out.append(row | {"tag_s2id": s2_id(lat, lng, 13)})
    return out


@pytest.fixture(scope="module")
def viewer_lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("viewer-lab")
    with InfluxServer(tmp / "influxdb", free_port()) as influx:
        rows = surge_rows(count=3000)
        database = write_influx_v1(influx, rows + moved_to(rows, "bandung"))
        (tmp / "lab").mkdir()
        server = start_viewer_lab(tmp / "lab", f"influx1:{influx.url}/{database}")
        yield server
        stop_jupyter(server)


def open_dashboard(browser, server, user: str):
    page = recorded_page(browser, width=1200, height=1000)
    page.sockets = []
    page.on("websocket", lambda ws: page.sockets.append(ws.url))
    page.goto(f"{server.url}{DASHBOARD}?token={TOKENS[user]}", timeout=180_000)
    page.wait_for_selector("iframe.atlas-frame", timeout=180_000)
    frame = page.frame_locator("iframe.atlas-frame")
    frame.locator("#deck-container canvas").wait_for()
    return page


#: from the page, as any script of the viewer's could: a second connection to the
#: dashboard's kernel sending an execute_request, then a kernel_info_request
SEND_TO_KERNEL = """async ([url, code]) => {
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
  const got = [];
  ws.onmessage = (e) => { if (typeof e.data === "string") got.push(JSON.parse(e.data).msg_type); };
  const message = (type, content) => JSON.stringify({
    header: {msg_id: String(Math.random()), msg_type: type, username: "u", session: "s",
             date: new Date().toISOString(), version: "5.3"},
    parent_header: {}, metadata: {}, content, channel: "shell", buffers: []});
  ws.send(message("execute_request", {code, silent: false, store_history: false,
                                      user_expressions: {}, allow_stdin: false}));
  ws.send(message("kernel_info_request", {}));
  await new Promise((done) => setTimeout(done, 3000));
  ws.close();
  return got;
}"""


def run_in_kernel(page, marker: Path) -> list[str]:
    """Ask the dashboard's kernel to write ``marker``; the message types answered."""
    url = next(u for u in page.sockets if "/api/kernels/" in u).split("?")[0]
    url += f"?session_id=probe-{marker.name}"  # a connection of its own
    return page.evaluate(SEND_TO_KERNEL, [url, f"open({str(marker)!r}, 'w').write('ran')"])


def options(select) -> list[str]:
    return [text.replace("\xa0", " ") for text in select.locator("option").all_inner_texts()]


def legend(page) -> str:
    return page.frame_locator("iframe.atlas-frame").locator(".atlas-legend").inner_text()


def assert_clean(page) -> None:
    outside = [url for url in page.requests if not url.startswith(("http://127.0.0.1", "data:"))]
    assert page.problems == [], outside
    assert outside == []


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(1000)  # the map drawn
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_a_viewer_sees_only_bandung_and_nothing_else(viewer_lab, chromium, tmp_path):
    page = open_dashboard(chromium, viewer_lab, "carla")
    city = page.locator(".city-dashboard select").first
    assert options(city) == ["Bandung"]
    assert city.input_value() == "Bandung"
    assert "Bandung" in legend(page)
    assert "Jakarta" not in legend(page) + page.locator(".dashboard-chart-box").inner_text()
    shoot(page, "dashboard-viewer.png")  # the README shows a copy of it
    marker = tmp_path / "viewer-ran-code"
    answered = run_in_kernel(page, marker)
    assert "kernel_info_reply" in answered and "execute_reply" not in answered
    assert not marker.exists()  # the execute_request never reached the kernel
    assert_clean(page)

    # the login cookie the token set: the rest of the server is closed to her
    for path in ("workbench/api/jobs", "workbench/api/me", "api/contents", "api/kernels"):
        answer = page.request.get(viewer_lab.url + path)
        assert answer.status == 403, (path, answer.status)
        assert "dashboard viewer" in answer.text()
    for path in ("lab", "tree", "lab/tree/dashboard.ipynb", "voila/tree", "files/dashboard.ipynb"):
        answer = page.request.get(viewer_lab.url + path, max_redirects=0)
        assert answer.status == 403, (path, answer.status)
    page.close()


def test_a_team_member_sees_every_city(viewer_lab, chromium, tmp_path):
    page = open_dashboard(chromium, viewer_lab, "alice")
    city = page.locator(".city-dashboard select").first
    assert options(city) == ["Jakarta", "Bandung", "Surabaya"]
    assert city.input_value() == "Jakarta"
    assert "Jakarta" in legend(page)
    city.select_option("Bandung")
    page.wait_for_function(
        "() => document.querySelector('iframe.atlas-frame')?.srcdoc.includes('· Bandung ·')",
    )
    shoot(page, "dashboard-team-member.png")
    marker = tmp_path / "member-ran-code"
    assert "execute_reply" in run_in_kernel(page, marker)  # Jupyter's own channels for her
    assert marker.read_text() == "ran"
    assert_clean(page)
    assert page.request.get(viewer_lab.url + "workbench/api/jobs").status == 200
    assert page.request.get(viewer_lab.url + "lab").status == 200
    page.close()
