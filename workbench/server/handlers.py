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

import logging
from typing import Any

from workbench.server import (
    cluster_routes,
    kafka_cluster_routes,
    quality_routes,
    reload_routes,
    schema_routes,
)
from workbench.server.api import (
    API,
    ApiError,
    ApiHandler,
    _unbase64,
    check_schema_version,
)

log = logging.getLogger("workbench.server")

#: POST /jobs body keys (JobService.submit's keywords); ``notebook`` is base64.
SUBMIT_KEYS = {"name", "team", "spec_yaml", "cluster", "notebook", "parity", "note"}
SUBMIT_KEYS |= {"schema_version"}  # a published schema version to pin (schema safety)
#: POST /silences body keys: ``for`` is a duration ("2h") or seconds; ``team`` defaults to
#: the caller's only team
SILENCE_KEYS = {"rule", "labels", "for", "comment", "team"}


class JobsRoute(ApiHandler):
    async def get(self) -> None:
        team = self.get_query_argument("team", None)
        archived = self.get_query_argument("all", "") in ("1", "true")  # archived ones too
        self.reply({"jobs": await self.call("list_jobs", team=team or None, archived=archived)})

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

    async def delete(self, ref: str) -> None:  # a job that does not run (409 otherwise)
        self.reply(await self.call("delete", ref))


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


_REF = r"([^/]+)"
#: (path under ``workbench/api/``, route class)
ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("jobs", JobsRoute),
    (f"jobs/{_REF}", JobRoute),
    (f"jobs/{_REF}/(stop|start|restart|archive|unarchive)", ActionRoute),
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
    *cluster_routes.ROUTES,
    *kafka_cluster_routes.ROUTES,
    *quality_routes.ROUTES,
    *schema_routes.ROUTES,
    *reload_routes.ROUTES,
]
ROUTE_LIST = (
    "jobs, jobs/JOB, jobs/JOB/{stop,start,restart,archive,unarchive,rollback,versions,logs,"
    "progress,events,alerts,move,failover}, jobs/JOB/versions/N/notebook, alerts, silences, "
    "silences/ID, me, clusters, clusters/NAME, kafka-clusters, kafka-clusters/NAME, "
    "service/reload"
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
