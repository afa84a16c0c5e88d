"""``workbench serve``'s browser login: an access token presented once becomes a signed
cookie (:meth:`workbench.server.identity.TokenIdentity.log_in`), as Jupyter's login does.

``GET {base_url}workbench/login`` shows a form asking for the access token; posting it
sets the cookie and goes on to ``next``. A page's URL with ``?token=T`` (a link someone
was sent) does the same and reloads the URL without the token, so it stays in no address
bar, history or log. A wrong token: 401, and the denial in the audit trail.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import urlsplit

from tornado.web import RequestHandler

from workbench.server.api import ApiError
from workbench.server.identity import SAFE_METHODS
from workbench.server.page_html import FORM_CSP, error_page, login_form, page, without_token

PATH = "workbench/login"
WRONG = "that access token is not valid: paste it again, or ask the admin for yours"


class UrlLogin:
    """A handler mixin: a read's ``?token=T`` logs the browser in, then the URL reloads
    without it."""

    identify: Any
    request: Any

    def logged_in_by_url(self) -> bool:
        """Whether this request was a URL login, answered (a redirect); a wrong token: 401."""
        token = self.get_query_argument("token", None)  # type: ignore[attr-defined]
        if token is None or self.request.method not in SAFE_METHODS:
            return False
        if self.identify.caller_of(token) is None:
            raise ApiError(401, "Unauthorized", WRONG)
        self.identify.log_in(self, token)
        self.redirect(without_token(self.request.uri))  # type: ignore[attr-defined]
        return True


class LoginRoute(RequestHandler):
    def initialize(self, identify: Any, **_: Any) -> None:
        self.identify = identify

    def get(self) -> None:
        self.show(self.get_query_argument("next", ""))

    def post(self) -> None:
        token = self.get_body_argument("token", "").strip()
        if not token or self.identify.caller_of(token) is None:
            self.refusal = WRONG
            self.set_status(401)
            self.show(self.get_body_argument("next", ""), WRONG)
            return
        self.identify.log_in(self, token)
        next_url = _local(self.get_body_argument("next", ""))
        if next_url:
            self.redirect(next_url, status=303)
            return
        who = html.escape(self.identify.caller_of(token).user)
        self.finish(page("Logged in", f"<h1>Logged in as {who}</h1>"))

    def show(self, next_url: str, problem: str = "") -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", FORM_CSP)
        self.set_header("Cache-Control", "no-store")
        form = login_form(self.request.path, _local(next_url), problem)
        self.finish(page("Log in", f"<h1>Dagger Workbench: log in</h1>{form}"))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = {"status": status_code, "type": self._reason.replace(" ", ""), "message": ""}
        self.finish(error_page(error | {"message": self._reason}))


def _local(url: str) -> str:
    """``url`` if it is a path on this server (no scheme, no host), else ''."""
    parts = urlsplit(url)
    local = url.startswith("/") and url[1:2] not in ("/", "\\") and not parts.netloc
    return url if local and not parts.scheme else ""


def rules(base_url: str, settings: dict) -> list[tuple[str, type, dict]]:
    return [(base_url.rstrip("/") + "/" + PATH + "/?", LoginRoute, settings)]
