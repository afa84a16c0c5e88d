"""The job service inside Jupyter: a jupyter_server extension mounting the same handlers
(:mod:`workbench.server.handlers`, :mod:`workbench.server.pages`) under the server's
``base_url``, so the API, the health pages and the metrics work in JupyterLab and under
JupyterHub (``/user/NAME/workbench/api/...``, ``/user/NAME/workbench/jobs/JOB/health``).

Enabled on install by ``jupyter-config/jupyter_server_config.d/dagger_workbench.json``
(``jupyter server extension enable workbench.server`` for a development install). Requests
go through Jupyter's own authentication (``@web.authenticated``), authorization
(``@authorized`` on resource ``workbench``) and XSRF checks. The caller is Jupyter's user
(``current_user.username``: the JupyterHub user under Hub); on a plain Jupyter server,
whose token names nobody, the caller is the server's owner (an admin), as with the
embedded service. A dashboard viewer (teams file ``viewers:``) is refused every route
(403) before the route reads its request. Jupyter's request log scrubs secret-looking
query parameters; every denial of the server goes to the service's audit trail. Settings
are the traits of :class:`WorkbenchService` (``c.WorkbenchService.state_dir`` ...).
"""

from __future__ import annotations

import atexit
import functools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from tornado import web
from traitlets import Bool, Enum, Unicode
from traitlets.config import Configurable

from workbench.jobs.config import ServiceConfig
from workbench.server import new_dagger, promotions
from workbench.server.access_log import SCRUB_WORDS, audited
from workbench.server.handlers import ApiHandler, rules
from workbench.server.identity import Caller, Identify, local_user
from workbench.server.pages import page_rules
from workbench.server.promotions import Promotions
from workbench.settings import settings as environment


class WorkbenchService(Configurable):
    """The job service's settings in a Jupyter server."""

    state_dir = Unicode(
        "",
        config=True,
        help="Job service state folder (default: $WORKBENCH_SERVICE_STATE, else "
        "$WORKBENCH_HOME/service).",
    )
    config_file = Unicode(
        "", config=True, help="Job service config file (default: STATE/service.yaml)."
    )
    identity = Enum(
        ["auto", "jupyter", "owner"],
        default_value="auto",
        config=True,
        help="Who calls the job service: 'jupyter' = Jupyter's user name (JupyterHub's "
        "user); 'owner' = the user running this server, as an admin; 'auto' = 'owner' "
        "with Jupyter's own token/password login (it names nobody), else 'jupyter'.",
    )
    supervise = Bool(
        True,
        config=True,
        help="Run the job supervisor in this server (one process per state folder "
        "supervises at a time; the others stand by and take over when it ends).",
    )


class JupyterApiHandler(ApiHandler, APIHandler):
    auth_resource = "workbench"


class JupyterPageHandler(ApiHandler, JupyterHandler):
    """The health page and the metrics: not JSON (an APIHandler answers only JSON)."""

    auth_resource = "workbench"


#: routes of the lab extension, only in Jupyter: promote a notebook of this server's root,
#: the "new dagger" template
LAB_ROUTES = [*promotions.ROUTES, *new_dagger.ROUTES]


def _guard(method: Any) -> Any:
    """Jupyter's login and authorizer, then a dashboard viewer is refused (403) before the
    route reads its request."""

    @functools.wraps(method)
    async def viewers_refused(self: ApiHandler, *args: Any, **kwargs: Any) -> Any:
        found = self.identify(self)
        if found is not None:
            self.refuse_viewer(found)
        return await method(self, *args, **kwargs)

    return web.authenticated(authorized(viewers_refused))


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "workbench.server.extension"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from workbench.service.job_service import JobService

    settings = WorkbenchService(parent=serverapp)
    state = Path(settings.state_dir) if settings.state_dir else environment().service_state
    config = ServiceConfig.load(state, Path(settings.config_file) if settings.config_file else None)
    service = JobService(config)
    if settings.supervise:
        _supervise(service, serverapp)
    identify = jupyter_identity(settings.identity, serverapp.identity_provider)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="workbench-api")
    handler_settings = {"service": service, "identify": identify, "executor": executor}
    serverapp.web_app.settings["workbench_service"] = service
    _log_requests(serverapp.web_app.settings)
    promotions_run = Promotions(service, serverapp.root_dir)
    atexit.register(promotions_run.close)
    serverapp.web_app.settings["workbench_promotions"] = promotions_run
    base_url = serverapp.web_app.settings.get("base_url", "/")
    serverapp.web_app.add_handlers(
        ".*$",
        rules(base_url, JupyterApiHandler, handler_settings, wrap=_guard)
        + rules(base_url, JupyterApiHandler, handler_settings, wrap=_guard, routes=LAB_ROUTES)
        + page_rules(base_url, JupyterPageHandler, handler_settings, wrap=_guard),
    )
    serverapp.log.info(
        "workbench job service at %sworkbench/api (state %s)", base_url, config.state_dir
    )


def _log_requests(web: dict) -> None:
    """Jupyter's request log scrubs our secret-looking parameters too; denials (401, 403,
    a hidden job) go to the audit trail."""
    web["log_function"] = audited(web.get("log_function"))
    web["extra_log_scrub_param_keys"] = [*web.get("extra_log_scrub_param_keys", []), *SCRUB_WORDS]


def _supervise(service: Any, serverapp: Any) -> None:
    if not service.start_supervisor():
        serverapp.log.info(
            "workbench job service: another process supervises the jobs; standing by"
        )
    atexit.register(service.stop_supervisor)


def jupyter_identity(mode: str, provider: Any) -> Identify:
    """The caller of a Jupyter request, as :class:`WorkbenchService.identity` says."""
    if mode == "auto":
        mode = "owner" if _names_nobody(provider) else "jupyter"
    if mode == "owner":
        owner = Caller(local_user(), owner=True)
        return lambda handler: owner if handler.current_user else None

    def from_jupyter(handler: Any) -> Caller | None:
        user = handler.current_user
        return Caller(user.username) if user else None

    return from_jupyter


def _names_nobody(provider: Any) -> bool:
    """Jupyter's stock token/password login: one shared secret, anonymous users."""
    from jupyter_server.auth.identity import (
        IdentityProvider,
        LegacyIdentityProvider,
        PasswordIdentityProvider,
    )

    return type(provider) in (IdentityProvider, PasswordIdentityProvider, LegacyIdentityProvider)
