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
