"""HTTP calls to a store's server, with its failures turned into :class:`StoreError`."""

from __future__ import annotations

from typing import Any

import requests

from workbench.dashboard.errors import StoreError, StoreUnreachableError

TIMEOUT_S = 5.0


def call(store: str, method: str, url: str, **kwargs: Any) -> requests.Response:
    """``requests.request`` that raises ``StoreUnreachableError`` when nothing answers and
    ``StoreError`` (with the server's words) for an error status."""
    try:
        response = requests.request(method, url, timeout=TIMEOUT_S, **kwargs)
    except requests.RequestException as err:
        raise StoreUnreachableError(
            store,
            f"Cannot reach the results store ({store}): {_reason(err)}. "
            "Check that the server is running and the dashboard's store URL is right.",
        ) from err
    if response.status_code >= 400:
        text = response.text.strip()[:300] or response.reason
        raise StoreError(
            store, f"The results store ({store}) answered {response.status_code}: {text}"
        )
    return response


def _reason(err: requests.RequestException) -> str:
    if isinstance(err, requests.ConnectionError):
        return "connection refused or host unknown"
    if isinstance(err, requests.Timeout):
        return f"no answer within {TIMEOUT_S:g}s"
    return type(err).__name__
