"""The base of every REST route of the job service: :class:`ApiHandler` (the caller as the
service's Principal, the JobService call in a thread, errors as
``{"error": {"status", "type", "message"}}``, or as a page for a browser) and
:class:`ApiError`. A denial's who and why stay on the handler (``audit_user``,
``refusal``, ``denial``) for the audit trail (:mod:`workbench.server.access_log`). Route modules
(:mod:`.handlers` for jobs, alerts and silences, :mod:`.cluster_routes`, ...) subclass it;
:func:`workbench.server.handlers.rules` mounts them.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import uuid
from concurrent.futures import Executor
from datetime import date, datetime
from pathlib import Path
from typing import Any

from tornado.web import HTTPError, RequestHandler

from workbench.exceptions import WorkbenchError
from workbench.jobs.authz import check_not_viewer
from workbench.server.access_log import scrub_uri
from workbench.server.identity import Caller, Identify, principal
from workbench.server.page_html import (
    FORM_CSP,
    error_page,
    login_form,
    wants_html,
    without_token,
)

log = logging.getLogger("workbench.server")
general = logging.getLogger("tornado.general")

API = "workbench/api"
#: HTTP statuses a WorkbenchError's ``status`` may carry to the client; others mean 400.
ERROR_STATUSES = {400, 401, 403, 404, 409}
NO_TOKEN = "no valid token"
BROWSER_LOGIN = (
    "Log in to see this page: paste your access token below (a script sends the header "
    "'Authorization: token T')."
)


class ApiError(HTTPError):
    """An error answered as JSON: ``status``, ``type`` and a message saying what to do."""

    def __init__(self, status: int, kind: str, message: str, details: dict | None = None):
        super().__init__(status)
        self.kind, self.message, self.details = kind, message, details or {}


def error_body(status: int, kind: str, message: str, details: dict | None = None) -> dict:
    """The error's JSON; ``details``: a typed error's facts (its ``details()``) beside."""
    return {"error": {"status": status, "type": kind, "message": message, **(details or {})}}


def to_json(data: Any) -> str:
    return json.dumps(data, default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"not JSON: {type(value).__name__}")


class ApiHandler(RequestHandler):
    """The part every route shares; :func:`rules` mixes each route into the server's own
    handler class."""

    service: Any
    identify: Identify
    executor: Executor | None
    #: who was refused (a user name), why (the message), and a job hidden as 404
    audit_user: str | None = None
    refusal: str | None = None
    denial: str | None = None

    def initialize(self, service: Any, identify: Identify, executor: Executor | None = None):
        self.service, self.identify, self.executor = service, identify, executor

    def caller(self) -> Caller:
        found = self.identify(self)
        if found is None:
            raise ApiError(
                401,
                "Unauthorized",
                f"{NO_TOKEN}: send 'Authorization: token T' with a token from the service "
                "config (tokens or tokens_file), or the owner's token in STATE/local-token; "
                "in a browser, log in once with your access token",
            )
        self.audit_user = found.user
        self.refuse_viewer(found)
        return found

    def refuse_viewer(self, caller: Caller) -> None:
        """A dashboard viewer (teams file ``viewers:``) gets 403 on every route."""

        try:
            check_not_viewer(principal(self.service, caller))
        except WorkbenchError as err:
            raise ApiError(403, type(err).__name__, str(err)) from err

    async def call(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        """``service.<operation>(who, *args, **kwargs)`` in a worker thread."""
        return await self.run(lambda who: getattr(self.service, operation)(who, *args, **kwargs))

    async def run(self, work: Any) -> Any:
        """``work(who)`` in a worker thread, ``who`` the caller's Principal; a WorkbenchError
        becomes the ApiError of its status."""
        caller = self.caller()

        def run() -> Any:
            return work(principal(self.service, caller))

        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, run)
        except WorkbenchError as err:
            self.denial = getattr(err, "denied", None)
            status = getattr(err, "status", None)
            status = status if status in ERROR_STATUSES else 400
            details = err.details() if hasattr(err, "details") else None
            raise ApiError(status, type(err).__name__, str(err), details) from err

    async def who(self) -> Any:
        caller = self.caller()
        return await asyncio.get_running_loop().run_in_executor(
            self.executor, principal, self.service, caller
        )

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(to_json(data))

    def body(self, known: set[str], required: tuple[str, ...] = ()) -> dict:
        """The request's JSON object, checked against ``known`` and ``required`` keys."""
        raw = self.request.body
        try:
            data = json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError) as err:
            raise ApiError(
                400, "BadRequest", f"the body is not JSON ({err}): send an object"
            ) from None
        if not isinstance(data, dict):
            raise ApiError(400, "BadRequest", "the body must be a JSON object")
        unknown = sorted(set(data) - known)
        if unknown:
            raise ApiError(
                400, "BadRequest", f"unknown keys {unknown}; the keys are {sorted(known)}"
            )
        missing = [k for k in required if data.get(k) in (None, "")]
        if missing:
            raise ApiError(400, "BadRequest", f"missing {missing}: give them in the body")
        return data

    def int_arg(self, name: str, default: int | None) -> int | None:
        value = self.get_query_argument(name, None)
        if value in (None, ""):
            return default
        try:
            return int(value)
        except ValueError:
            raise ApiError(
                400, "BadRequest", f"query parameter '{name}' must be an integer, not {value!r}"
            ) from None

    def log_exception(self, typ, value, tb) -> None:  # type: ignore[no-untyped-def]
        if isinstance(value, HTTPError) and value.log_message:  # as tornado, URI scrubbed
            said = value.log_message % value.args if value.args else value.log_message
            uri = scrub_uri(self.request.uri)
            general.warning("%d %s %s: %s", value.status_code, self.request.method, uri, said)
        # anything else: write_error logs it once, with the reference it answers

    def wants_html(self) -> bool:
        """Errors as a page (a browser's request), else JSON."""
        return wants_html(self.request)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        body = self.error_of(status_code, **kwargs)
        if status_code in (401, 403):
            self.refusal = body["error"]["message"]
        if not self.wants_html():
            self.set_header("Content-Type", "application/json")
            self.finish(to_json(body))
            return
        error = body["error"]
        if status_code == 401 and error["message"].startswith(NO_TOKEN):
            error = error | {"message": BROWSER_LOGIN}
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", FORM_CSP)
        self.finish(error_page(error, self.login_form() if status_code == 401 else ""))

    def login_form(self) -> str:
        """On a 401 page: the server's own login form, if it has one (``workbench serve``)."""
        action = self.settings.get("workbench_login")
        return login_form(action, without_token(self.request.uri)) if action else ""

    def error_of(self, status_code: int, **kwargs: Any) -> dict:
        """The error body for ``write_error``'s arguments (a 500 logged with a reference)."""
        err = (kwargs.get("exc_info") or (None, None, None))[1]
        if isinstance(err, ApiError):
            body = error_body(err.status_code, err.kind, err.message, err.details)
        elif isinstance(err, HTTPError):
            reason = err.reason or self._reason
            body = error_body(status_code, reason.replace(" ", ""), err.log_message or reason)
        elif status_code >= 500:
            ref = uuid.uuid4().hex[:8]
            log.error("internal error %s", ref, exc_info=kwargs.get("exc_info"))
            body = error_body(
                500, "InternalError", f"the job service failed (ref {ref}): see its log"
            )
        else:
            body = error_body(status_code, "Error", self._reason)
        return body


def check_schema_version(data: dict) -> int | None:
    """The body's ``schema_version``: a published version's number, or absent/null."""
    value = data.get("schema_version")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ApiError(400, "BadRequest", f"schema_version must be a version number, not {value!r}")
    return value


def _unbase64(value: Any, key: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "BadRequest", f"'{key}' must be base64 text") from None
