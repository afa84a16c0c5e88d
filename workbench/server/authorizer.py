"""A jupyter_server Authorizer for dashboard viewers: ``ServerApp.authorizer_class =
workbench.server.authorizer.WorkbenchAuthorizer``.

A viewer (teams file ``viewers:``) is denied every resource but what rendering the
dashboard needs (:func:`workbench.dashboard.viewers.viewer_may`); everyone else passes
unchanged, as with Jupyter's default AllowAllAuthorizer. Jupyter asks the authorizer only
from handlers marked ``@authorized`` (the REST APIs, the kernels' websocket); JupyterLab's
and Voila's pages are only ``@authenticated``, so :func:`gate` asks it for every request
(:class:`workbench.server.login.TokenLogin` calls it once a user is known).
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer
from tornado import web
from traitlets import List, Unicode

from workbench.dashboard.viewers import DASHBOARD, refusal, relative_path, viewer_areas, viewer_may


class WorkbenchAuthorizer(Authorizer):
    dashboards = List(
        Unicode(),
        default_value=[DASHBOARD],
        config=True,
        help="Notebooks (paths under the server's root) a dashboard viewer may render with "
        "Voila (voila/render/PATH).",
    )

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        if viewer_areas(handler, user) is None:
            return True
        allowed = viewer_may(relative_path(handler), self.dashboards, handler.request.method)
        if not allowed:
            self.log.info(
                "dashboard viewer %s refused %s %s (%s)",
                user.username,
                action,
                resource,
                handler.request.path,
            )
        return allowed


def gate(handler: Any, user: Any) -> None:
    """403 for a request the server's WorkbenchAuthorizer refuses (any handler, also those
    Jupyter does not ask the authorizer for)."""
    authorizer = handler.settings.get("authorizer")
    if not isinstance(authorizer, WorkbenchAuthorizer):
        return
    if not authorizer.is_authorized(handler, user, "read", "page"):
        path = relative_path(handler).replace("%", "")  # the message is a format string
        handler.audit_user, handler.refusal = user.username, refusal(user.username, path)
        handler.current_user = user  # the 403 page names who is refused
        raise web.HTTPError(403, handler.refusal)
