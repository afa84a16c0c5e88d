"""http(s) URLs as users write them in specs and flags: checked before anything connects."""

from __future__ import annotations

from urllib.parse import urlsplit

from workbench import secrets
from workbench.exceptions import clip


def http_url_problem(value: str) -> str | None:
    """Why ``value`` is not a usable http(s) URL such as ``http://host:8086`` (None if it is)."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as err:
        return f"'{clip(value)}' is not a URL ({err}); write e.g. http://host:8086"
    if parts.scheme not in ("http", "https"):
        return f"'{clip(value)}' is not an http(s) URL; write e.g. http://host:8086"
    if not parts.hostname or any(c.isspace() for c in value):
        return f"'{clip(value)}' has no valid host; write e.g. http://host:8086"
    if port == 0:
        return f"'{clip(value)}' has port 0; give the server's port"
    return None


def check_http_url(value: str) -> str:
    """``value`` if it is an http(s) URL; ValueError (for pydantic validators) if not. A
    value holding a secret reference (``${env:..}``) is checked once the job resolved it."""

    if secrets.references(value):
        return value
    problem = http_url_problem(value)
    if problem:
        raise ValueError(problem)
    return value
