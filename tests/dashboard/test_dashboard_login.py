"""``workbench dashboard`` behind the job service's login, as a user starts it: it refuses
to start with nobody to let in, ``--local`` stays on 127.0.0.1, and with a state folder
(tokens, a teams file with a viewer) it serves the dashboard to logged-in users only,
keeps the viewer to it, and stops on SIGTERM leaving nothing behind."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import requests
import yaml
from services_browser import recorded_page
from test_voila import dashboard_cli, private_folders, stopped_by, wait_for_port

from workbench.dev.ports import free_port

pytestmark = pytest.mark.unit

TOKENS = {"alice-token": "alice", "carla-token": "carla"}
TEAMS = {"teams": {"pricing": ["alice"]}, "viewers": {"carla": ["bandung"]}}
SCREENSHOTS = Path("/tmp/a36")


def state_folder(folder):
    folder.mkdir()
    (folder / "teams.yaml").write_text(yaml.safe_dump(TEAMS))
    config = {"teams_file": "teams.yaml", "tokens": TOKENS}
    (folder / "service.yaml").write_text(yaml.safe_dump(config))
    return folder


def test_with_nobody_to_let_in_it_says_to_give_tokens_or_local(tmp_path):
    log = tmp_path / "cli.log"
    refused = dashboard_cli("--state", str(tmp_path / "nothing"), log=log)
    assert refused.wait(60) == 1
    output = log.read_text()
    assert "no user can log in to the dashboard" in output and "--local" in output
    local = dashboard_cli("--local", "--ip", "0.0.0.0", log=log)
    assert local.wait(60) == 1
    assert "--local serves with no login, so only on 127.0.0.1" in log.read_text()


@pytest.mark.lab
def test_behind_the_login_then_sigterm_stops_it(tmp_path):
    state = state_folder(tmp_path / "state")
    port, log = free_port(), tmp_path / "cli.log"
    parent = dashboard_cli("--state", str(state), "--port", str(port), log=log)
    base = f"http://127.0.0.1:{port}/"
    try:
        wait_for_port(port, timeout=120)
        assert len(private_folders(log)) == 1  # its configuration, while it serves
        page = "voila/render/dashboard.ipynb"
        assert requests.get(base + page, timeout=30, allow_redirects=False).status_code in (
            302,
            403,
        )  # nobody logged in: to the login page
        carla = requests.Session()
        assert carla.get(f"{base}{page}?token=carla-token", timeout=180).status_code == 200
        jobs = carla.get(base + "workbench/api/jobs", timeout=30)  # her cookie, no token
        assert jobs.status_code == 403 and "dashboard viewer" in jobs.text
        assert carla.get(base + "api/contents", timeout=30).status_code == 403
        alice = {"Authorization": "token alice-token"}
        me = requests.get(base + "workbench/api/me", headers=alice, timeout=30)
        assert me.json() == {"user": "alice", "teams": ["pricing"], "admin": False}
        home = requests.get(base, headers=alice, timeout=30, allow_redirects=False)
        assert home.headers["Location"].rstrip("?").endswith(page)  # the home page
        stopped_by(parent, signal.SIGTERM, port)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert f"city dashboard on http://127.0.0.1:{port}/{page}" in log.read_text()
    assert "carla-token" not in log.read_text()
    assert private_folders(log) == []


def test_the_login_page_asks_a_city_head_for_the_access_token(tmp_path, chromium):
    """In Chromium: the login page says "Access token" and what to paste (not Jupyter's bare
    "Password:"); a wrong token is refused and audited; the viewer's refused page is a page
    saying why, with the way back to the dashboard (not an empty body)."""
    state = state_folder(tmp_path / "state")
    port, log = free_port(), tmp_path / "cli.log"
    parent = dashboard_cli("--state", str(state), "--port", str(port), log=log)
    base = f"http://127.0.0.1:{port}/"
    SCREENSHOTS.mkdir(exist_ok=True)
    try:
        wait_for_port(port, timeout=120)
        page = recorded_page(chromium)
        page.goto(base + "voila/render/dashboard.ipynb")  # nobody logged in: the login page
        field = page.get_by_label("Access token")
        assert field.is_visible()
        text = page.locator("body").inner_text()
        assert "Paste the access token you were given" in text and "Password" not in text
        page.screenshot(path=str(SCREENSHOTS / "dashboard-login.png"), full_page=True)
        field.fill("not-a-token")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_selector("#workbench-login .message")
        page.get_by_label("Access token").fill("carla-token")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url("**/voila/render/dashboard.ipynb")
        refused = page.goto(base + "tree")  # her cookie: the viewer is kept to the dashboard
        assert refused.status == 403
        said = page.locator("#workbench-refused").inner_text()
        assert "only the city dashboard is open to viewers" in said
        assert page.get_by_role("link", name="Open the city dashboard").is_visible()
        page.screenshot(path=str(SCREENSHOTS / "dashboard-403.png"), full_page=True)
        page.close()
        trail = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
        assert any(e["status"] == 401 and e["path"].startswith("/login") for e in trail)
        assert any(e["status"] == 403 and e["user"] == "carla" for e in trail)
        stopped_by(parent, signal.SIGTERM, port)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert "carla-token" not in log.read_text() and "carla-token" not in str(trail)
