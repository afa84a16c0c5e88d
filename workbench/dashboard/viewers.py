"""What a dashboard viewer (teams file ``viewers:``) may reach in a Jupyter server: the
dashboard rendered by Voila's server extension, its kernel's websocket and static files,
the login and logout pages; nothing else (JupyterLab, the contents and kernels APIs, the
job service). Pure decisions on a path under the server's ``base_url``, used by
:class:`workbench.server.authorizer.WorkbenchAuthorizer`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: the dashboard notebook's name in the server's root folder (``workbench dashboard``
#: copies the bundled one there)
DASHBOARD = "dashboard.ipynb"
_KERNEL = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: paths (under base_url) a viewer may reach whatever the dashboard
_ALWAYS = re.compile(
    r"(login|logout"
    r"|voila/(static|templates|labextensions|api/themes)/.*"
    rf"|voila/api/shutdown/{_KERNEL}"
    rf"|api/kernels/{_KERNEL}/channels"
    r"|static/.*"
    r")/?"
)
#: paths a viewer may only read: the model of the dashboard's kernel (Voila's page asks
#: for it before connecting)
_READ = re.compile(rf"api/kernels/{_KERNEL}/?")
#: kernel messages a viewer's browser may send: the widgets' comms and their handshakes;
#: no execute_request, so a viewer cannot run code in the dashboard's kernel
VIEWER_MESSAGES = frozenset(
    {"comm_open", "comm_msg", "comm_close", "comm_info_request", "kernel_info_request"}
)


def viewer_may(path: str, dashboards: Iterable[str] = (DASHBOARD,), method: str = "GET") -> bool:
    """May a viewer request ``path`` (under base_url, no leading slash, no query) with
    ``method``?"""
    path = path.lstrip("/")
    if any(part in (".", "..") for part in path.split("/")):
        return False
    if _ALWAYS.fullmatch(path) or (method in ("GET", "HEAD") and _READ.fullmatch(path)):
        return True
    rendered = path.removeprefix("voila/render/")
    return rendered != path and rendered.rstrip("/") in set(dashboards)


def relative_path(handler: Any) -> str:
    """The request's path under the server's ``base_url``."""
    base = str(handler.settings.get("base_url", "/"))
    path = str(handler.request.path)
    return path[len(base) :] if path.startswith(base) else path.lstrip("/")


def viewer_areas(handler: Any, user: Any) -> frozenset[str] | None:
    """The service areas of ``user`` if a dashboard viewer of the workbench service mounted
    in this server (teams file ``viewers:``), else None (not a viewer, or no service)."""
    service = handler.settings.get("workbench_service")
    name = getattr(user, "username", None)
    if service is None or not name:
        return None
    return service.principal(name).areas


def refusal(user: str, path: str) -> str:
    return (
        f"'{user}' is a dashboard viewer: only the city dashboard is open to viewers, "
        f"not {path or 'this page'}. Open voila/render/{DASHBOARD} on this server."
    )
