"""The service's pages as HTML text: the frame every page shares (:func:`page`: inline
style, no script, nothing fetched), the error page a browser gets instead of a JSON
body, and the login form (an access token, pasted once; a cookie keeps it).
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import parse_qsl, urlencode

from workbench.charts import STYLE

REFRESH_S = 30
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'"
)
#: the error and login pages: a form posting to this server
FORM_CSP = CSP.replace("form-action 'none'", "form-action 'self'")
FORM_STYLE = (
    "form{margin-top:1.2rem}label{display:block;font-weight:600;margin-bottom:.3rem}"
    "input[type=password]{width:28rem;max-width:90%;padding:.35rem;font:inherit}"
    "button{margin-top:.6rem;padding:.35rem 1rem;font:inherit}"
)
#: what the login form asks for, in the page and in tests
TOKEN_LABEL = "Access token"
TOKEN_HELP = (
    "Paste the access token you were given (city heads: the access token that came with "
    "your dashboard link; analysts: your job service token). It is sent once; a cookie "
    "keeps you logged in on this browser."
)


def page(title: str, body: str, refresh: bool = False) -> str:
    meta = f'<meta http-equiv="refresh" content="{REFRESH_S}">' if refresh else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<link rel="icon" href="data:,">{meta}<title>{html.escape(title)}</title>'
        f"<style>{STYLE}{FORM_STYLE}</style></head><body>{body}</body></html>"
    )


def login_form(action: str, next_url: str, problem: str = "") -> str:
    """The form asking for an access token; ``problem``: why the last one failed."""
    said = f'<p class="problem">{html.escape(problem)}</p>' if problem else ""
    return (
        f'{said}<form method="post" action="{html.escape(action)}">'
        f'<label for="token">{TOKEN_LABEL}</label>'
        '<input type="password" id="token" name="token" autocomplete="current-password" '
        "autofocus required>"
        f'<input type="hidden" name="next" value="{html.escape(next_url)}">'
        f'<p class="muted">{html.escape(TOKEN_HELP)}</p>'
        '<button type="submit">Log in</button></form>'
    )


def error_page(error: dict[str, Any], form: str = "") -> str:
    """An error (``{"status", "type", "message"}``) as a page; ``form``: a login form."""
    title = f"{error['status']} {error['type']}"
    message = html.escape(error["message"])
    body = f'<h1>{html.escape(title)}</h1><p class="problem">{message}</p>{form}'
    return page(title, body)


def wants_html(request: Any) -> bool:
    """A browser's request (its Accept names text/html before JSON), not an API client's."""
    accept = request.headers.get("Accept", "")
    html_at = accept.find("text/html")
    json_at = accept.find("application/json")
    return html_at >= 0 and (json_at < 0 or html_at < json_at)


def without_token(uri: str) -> str:
    """``uri`` (path and query) without its ``token`` parameters: where a login goes next."""
    path, _, query = uri.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "token"]
    return f"{path}?{urlencode(kept)}" if kept else path
