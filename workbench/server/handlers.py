"""The job service's REST handlers, shared by ``workbench serve`` and the Jupyter server
extension: JSON in and out, under ``{base_url}workbench/api/``.

Each route is a small mixin (``get``/``post``/``put``) over :class:`ApiHandler`, which
turns the request's caller into the service's Principal, runs the JobService call in a
thread (the service is synchronous; the server's loop stays free) and writes errors as
``{"error": {"status", "type", "message"}}``: the typed error's status (400/403/404/409)
and message; anything unexpected is a 500 whose body names no detail, only a reference
to the server log. :func:`rules` mounts the routes on a given tornado handler class. A
dashboard viewer (teams file ``viewers:``) is refused every route (403).
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
from workbench.server.identity import Caller, Identify, principal

log = logging.getLogger("workbench.server")

API = "workbench/api"
#: HTTP statuses a WorkbenchError's ``status`` may carry to the client; others mean 400.
ERROR_STATUSES = {400, 401, 403, 404, 409}
#: POST /jobs body keys (JobService.submit's keywords); ``notebook`` is base64.
SUBMIT_KEYS = {"name", "team", "spec_yaml", "cluster", "notebook", "parity", "note"}
SUBMIT_KEYS |= {"schema_version"}  # a published schema version to pin (schema safety)
#: POST /silences body keys: ``for`` is a duration ("2h") or seconds; ``team`` defaults to
#: the caller's only team
SILENCE_KEYS = {"rule", "labels", "for", "comment", "team"}


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

    def initialize(self, service: Any, identify: Identify, executor: Executor | None = None):
        self.service, self.identify, self.executor = service, identify, executor

    def caller(self) -> Caller:
        found = self.identify(self)
        if found is None:
            raise ApiError(
                401,
                "Unauthorized",
                "no valid token: send 'Authorization: token T' with a token from the service "
                "config (tokens or tokens_file), or the owner's token in STATE/local-token",
            )
        self.refuse_viewer(found)
        return found

    def refuse_viewer(self, caller: Caller) -> None:
        """A dashboard viewer (teams file ``viewers:``) gets 403 on every route."""
        from workbench.jobs.authz import check_not_viewer

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
        if isinstance(value, HTTPError):
            super().log_exception(typ, value, tb)
        # anything else: write_error logs it once, with the reference it answers

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(to_json(self.error_of(status_code, **kwargs)))

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


class JobsRoute(ApiHandler):
    async def get(self) -> None:
        team = self.get_query_argument("team", None)
        self.reply({"jobs": await self.call("list_jobs", team=team or None)})

    async def post(self) -> None:
        data = self.body(SUBMIT_KEYS, required=("name", "team", "spec_yaml"))
        if data.get("notebook") is not None:
            data["notebook"] = _unbase64(data["notebook"], "notebook")
        check_schema_version(data)
        self.reply(await self.call("submit", **data), status=201)


class JobRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        self.reply(await self.call("get_job", ref))

    async def put(self, ref: str) -> None:
        data = self.body({"spec_yaml", "note", "schema_version"}, required=("spec_yaml",))
        pin = check_schema_version(data)
        note = data.get("note") or ""
        self.reply(await self.call("edit", ref, data["spec_yaml"], note=note, schema_version=pin))


class ActionRoute(ApiHandler):
    async def post(self, ref: str, action: str) -> None:
        self.reply(await self.call(action, ref))


class RollbackRoute(ApiHandler):
    async def post(self, ref: str) -> None:
        version = self.body({"version"}, required=("version",))["version"]
        if not isinstance(version, int) or isinstance(version, bool):
            raise ApiError(400, "BadRequest", f"'version' must be an integer, not {version!r}")
        self.reply(await self.call("rollback", ref, version))


class VersionsRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        self.reply({"versions": await self.call("versions", ref)})


class NotebookRoute(ApiHandler):
    async def get(self, ref: str, number: str) -> None:
        record = await self.call("notebook", ref, int(number))
        self.set_header("Content-Type", "application/x-ipynb+json")
        self.finish(record)


class LogsRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        run = self.get_query_argument("run", None)
        offset = self.int_arg("offset", 0)
        limit = self.int_arg("limit", 65536)
        self.reply(await self.call("logs", ref, run=run, offset=offset, limit_bytes=limit))


class ProgressRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        self.reply({"progress": await self.call("progress", ref, last=self.int_arg("last", 20))})


class EventsRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        self.reply({"events": await self.call("events", ref, last=self.int_arg("last", 100))})


class AlertsRoute(ApiHandler):
    async def get(self) -> None:
        team = self.get_query_argument("team", None) or None
        firing = self.get_query_argument("firing", "") not in ("", "0", "false")
        self.reply({"alerts": await self.call("list_alerts", team=team, firing=firing)})


class JobAlertsRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        last = self.int_arg("last", 100)
        self.reply({"alerts": await self.call("alert_history", ref, last=last)})


class SilencesRoute(ApiHandler):
    async def get(self) -> None:
        expired = self.get_query_argument("expired", "") not in ("", "0", "false")
        self.reply({"silences": await self.call("list_silences", expired=expired)})

    async def post(self) -> None:
        data = self.body(SILENCE_KEYS, required=("rule", "for", "comment"))
        labels = data.get("labels") or {}
        if not isinstance(labels, dict):
            raise ApiError(400, "BadRequest", "'labels' must be an object {label: value}")
        made = await self.call(
            "silence",
            data["rule"],
            labels=labels,
            duration=data["for"],
            comment=data["comment"],
            team=data.get("team"),
        )
        self.reply(made, status=201)


class SilenceRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        self.reply(await self.call("get_silence", ref))

    async def delete(self, ref: str) -> None:
        self.reply(await self.call("unsilence", ref))


class MeRoute(ApiHandler):
    async def get(self) -> None:
        who = await self.who()
        teams = getattr(who, "teams", ())
        self.reply({"user": who.user, "teams": sorted(teams), "admin": bool(who.admin)})


class NoRoute(ApiHandler):
    """Any other path under the API: a JSON 404 listing the routes."""

    def prepare(self) -> None:
        raise ApiError(
            404, "NoSuchRoute", f"no API route {self.request.path}: the routes are {ROUTE_LIST}"
        )


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


_REF = r"([^/]+)"
#: (path under ``workbench/api/``, route class)
ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("jobs", JobsRoute),
    (f"jobs/{_REF}", JobRoute),
    (f"jobs/{_REF}/(stop|start|restart)", ActionRoute),
    (f"jobs/{_REF}/rollback", RollbackRoute),
    (f"jobs/{_REF}/versions", VersionsRoute),
    (rf"jobs/{_REF}/versions/(\d+)/notebook", NotebookRoute),
    (f"jobs/{_REF}/logs", LogsRoute),
    (f"jobs/{_REF}/progress", ProgressRoute),
    (f"jobs/{_REF}/events", EventsRoute),
    (f"jobs/{_REF}/alerts", JobAlertsRoute),
    ("alerts", AlertsRoute),
    ("silences", SilencesRoute),
    (f"silences/{_REF}", SilenceRoute),
    ("me", MeRoute),
]
ROUTE_LIST = (
    "jobs, jobs/JOB, jobs/JOB/{stop,start,restart,rollback,versions,logs,progress,events,"
    "alerts,move,failover}, jobs/JOB/versions/N/notebook, alerts, silences, silences/ID, me, "
    "clusters, clusters/NAME, kafka-clusters, kafka-clusters/NAME"
)


def rules(
    base_url: str,
    base: type,
    settings: dict,
    wrap: Any = None,
    routes: list[tuple[str, type[ApiHandler]]] = ROUTES,
    under: str = API,
) -> list[tuple[str, type, dict]]:
    """Tornado URL rules for every route of ``routes`` under ``{base_url}{under}/`` (the API
    by default): each route mixed into ``base`` (a RequestHandler class), its methods
    passed through ``wrap`` (the Jupyter extension's authentication), ``settings`` given
    to ``initialize``."""
    prefix = base_url.rstrip("/") + "/" + under + "/"
    out = []
    for path, route in routes:
        methods = {
            name: wrap(getattr(route, name)) if wrap else getattr(route, name)
            for name in ("get", "post", "put", "delete")
            if name in route.__dict__
        }
        handler = type(route.__name__, (route, base), methods)
        out.append((prefix + path + "/?", handler, settings))
    return out


# Routes kept in modules of their own (they subclass ApiHandler, so they come last).
from workbench.server import cluster_routes, kafka_cluster_routes  # noqa: E402

ROUTES += cluster_routes.ROUTES + kafka_cluster_routes.ROUTES

from workbench.server import quality_routes  # noqa: E402

ROUTES += quality_routes.ROUTES
from workbench.server import schema_routes  # noqa: E402

ROUTES += schema_routes.ROUTES
