"""Debian's Chromium, headless, driven by Playwright (its own browser download is not
reachable here). Module-scoped: a Playwright session stays out of the way of the
asyncio loops other modules' Jupyter clients run."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail("Debian's chromium is not installed: run scripts/system-deps.sh test")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary)
        yield browser
        browser.close()


def recorded_page(browser, width=1200, height=1000, headers=None):
    """A new page that records console errors and uncaught exceptions (``page.problems``)
    and every request's URL (``page.requests``), and lets only loopback requests out (the
    network is off: anything else fails at once). Its waits default to 120 s, not
    Playwright's 30: on a loaded 2-core machine JupyterLab took 30 s to retitle a tab, and
    in a slow hour over 60 s to show a notebook's toolbar. A wait only costs when it fails."""
    page = browser.new_page(viewport={"width": width, "height": height}, extra_http_headers=headers)
    page.set_default_timeout(120_000)
    page.problems, page.requests = [], []
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("request", lambda r: page.requests.append(r.url))
    page.route("**/*", _loopback_only)
    return page


def _loopback_only(route):
    if route.request.url.startswith(("http://127.0.0.1", "data:")):
        route.continue_()
    else:
        route.abort("internetdisconnected")
