"""Posting a notifier's JSON over HTTP: one attempt with a timeout; anything but a 2xx
answer becomes a :class:`~workbench.exceptions.NotifyError` that says what to check."""

from __future__ import annotations

import json
from typing import Any

import requests

from workbench.exceptions import NotifyError, clip

ANSWER_CHARS = 500  # of a receiver's answer kept in an error
HEADERS = {"Content-Type": "application/json", "User-Agent": "dagger-workbench"}

_CHECK = {
    400: "it rejected the payload: check that the notifier's type matches the receiver",
    401: "it refused the credentials: check the notifier's token or key",
    403: "it refused the credentials: check the notifier's token or key",
    404: "no such endpoint: check the notifier's URL",
    413: "the message is too large for it: lower the notifier's max_alerts",
    429: "it is rate-limiting: send less often, or later",
}


def post_json(
    receiver: str,
    kind: str,
    url: str,
    payload: Any,
    timeout_s: float,
    headers: dict[str, str] | None = None,
) -> requests.Response:
    """POST ``payload`` as JSON to ``url`` (with ``headers`` too); the answer if 2xx."""
    try:
        data = json.dumps(payload, default=str).encode()  # a Decimal or date as text
        sent = HEADERS | (headers or {})
        answer = requests.post(url, data=data, headers=sent, timeout=timeout_s)
    except requests.Timeout:
        raise NotifyError(
            receiver,
            kind,
            f"no answer within {timeout_s:g}s: check that the receiver is up and not "
            "overloaded; a later attempt may succeed",
        ) from None
    except requests.RequestException as err:
        raise NotifyError(
            receiver,
            kind,
            f"could not connect ({reason(err)}): check that the receiver is up and that "
            "the notifier's URL is right; a later attempt may succeed",
        ) from None
    if answer.status_code >= 300:
        raise refused(receiver, kind, answer.status_code, answer.text)
    return answer


def refused(receiver: str, kind: str, status: int, text: str) -> NotifyError:
    """The error for an answer with HTTP ``status`` and body ``text``."""
    retryable = status >= 500 or status in (408, 429)
    check = _CHECK.get(status) or (
        "the receiver failed: check its logs; a later attempt may succeed"
        if status >= 500
        else "check the notifier's URL and the receiver's documentation"
    )
    said = clip(text.strip(), ANSWER_CHARS)
    answered = f": {said}" if said else ""
    return NotifyError(
        receiver,
        kind,
        f"answered HTTP {status}{answered} ({check})",
        status=status,
        answer=said,
        retryable=retryable,
    )


def reason(err: BaseException) -> str:
    """The innermost OS reason of a connection error ("Connection refused"), never the URL
    (which may hold a secret)."""
    found, seen = type(err).__name__, err
    for _ in range(12):  # a chain of causes, never a cycle
        if isinstance(seen, OSError) and seen.strerror:
            found = seen.strerror
        inner = getattr(seen, "reason", None)  # urllib3's MaxRetryError
        if not isinstance(inner, BaseException):
            nested = [a for a in seen.args if isinstance(a, BaseException)]
            inner = seen.__cause__ or seen.__context__ or (nested[0] if nested else None)
        if inner is None:
            break
        seen = inner
    return found
