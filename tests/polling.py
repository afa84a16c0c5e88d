"""Waiting for a condition in tests: poll until true or fail after a timeout."""

from __future__ import annotations

import time


def wait_for(predicate, timeout: float = 60.0, what: str = "condition", pause=time.sleep):
    """``predicate()``'s first truthy value, polled every 0.1 s; AssertionError on timeout.
    ``pause(seconds)`` waits between polls (a Playwright test passes one that lets the
    page go on: a sleep would hold its routed requests)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        pause(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
