"""``workbench serve``'s browser login as a user meets it: a token given once (in a link or
on the login form) becomes a cookie, the link reloads without it, later pages need no
token; the cookie serves reads only; a browser gets errors as pages, an API client JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from healthkit import fake_serve, submit
from servekit import TOKENS
from services_browser import recorded_page

from workbench.server.page_html import TOKEN_LABEL

pytestmark = pytest.mark.unit

SCREENSHOTS = Path("/tmp/a36")
HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    served = fake_serve(tmp_path_factory.mktemp("login"))
    submit(served, "alice", "pricey", "pricing")
    yield served
    assert served.stop() == 0


def _url(served, path: str) -> str:
    return f"{served.url.rstrip('/')}/{path}"


@pytest.mark.e2e
def test_a_token_in_a_link_logs_the_browser_in_once(served):
    browser = requests.Session()
    page = _url(served, "workbench/jobs/pricey/health")
    first = browser.get(page, params={"token": TOKENS["alice"], "x": "1"}, allow_redirects=False)
    assert first.status_code == 302
    assert first.headers["Location"] == "/workbench/jobs/pricey/health?x=1"  # no token
    cookie = first.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKENS["alice"] not in cookie
    again = browser.get(page)  # later: the cookie, no token
    assert again.status_code == 200 and "pricey health" in again.text
    assert browser.get(_url(served, "workbench/api/me")).json()["user"] == "alice"
    acted = browser.post(_url(served, "workbench/api/jobs/pricey/stop"))
    assert acted.status_code == 401  # the cookie serves reads only: nothing to forge
    assert requests.get(page, timeout=30).status_code == 401  # another browser: none


@pytest.mark.e2e
def test_the_login_form_and_errors_as_pages(served):
    login = _url(served, "workbench/login")
    form = requests.get(login, timeout=30)
    assert form.status_code == 200 and TOKEN_LABEL in form.text
    browser = requests.Session()
    wrong = browser.post(login, data={"token": "nope", "next": "/workbench/jobs/pricey/health"})
    assert wrong.status_code == 401 and "not valid" in wrong.text and TOKEN_LABEL in wrong.text
    right = browser.post(
        login,
        data={"token": TOKENS["bob"], "next": "/workbench/jobs/pricey/health"},
        allow_redirects=False,
    )
    assert right.status_code == 303 and right.headers["Location"] == "/workbench/jobs/pricey/health"
    away = browser.post(login, data={"token": TOKENS["bob"], "next": "//evil.example/"})
    assert away.status_code == 200 and "Logged in as bob" in away.text  # never off-site
    hidden = browser.get(_url(served, "workbench/api/jobs/pricey"), headers=HTML)
    assert hidden.status_code == 404 and hidden.headers["Content-Type"].startswith("text/html")
    assert "No job &#x27;pricey&#x27; that you can see" in hidden.text
    carla = {"Authorization": f"token {TOKENS['carla']}"}
    refused = requests.get(_url(served, "workbench/api/jobs"), headers=carla | HTML, timeout=30)
    assert refused.status_code == 403 and "<h1>403 ViewerForbiddenError</h1>" in refused.text
    as_json = requests.get(_url(served, "workbench/api/jobs"), headers=carla, timeout=30)
    assert as_json.status_code == 403 and as_json.json()["error"]["status"] == 403


def test_in_chromium_the_401_page_asks_for_the_access_token(served, chromium):
    SCREENSHOTS.mkdir(exist_ok=True)
    page = recorded_page(chromium)
    answer = page.goto(_url(served, "workbench/jobs/pricey/health"))
    assert answer.status == 401
    field = page.get_by_label(TOKEN_LABEL)
    assert field.is_visible()
    assert "access token" in page.locator("body").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "serve-login.png"), full_page=True)
    field.fill(TOKENS["alice"])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/workbench/jobs/pricey/health")
    assert page.title() == "pricey health"
    assert page.locator('svg.chart[aria-label="Status"]').count() == 1
    assert page.goto(_url(served, "workbench/quality/none")).status == 404  # logged in: 404
    assert all(TOKENS["alice"] not in url for url in page.requests)
    assert page.problems == [] or all("404" in p or "401" in p for p in page.problems)
    page.close()
