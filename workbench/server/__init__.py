"""The job service over HTTP: the REST routes (:mod:`.api`, :mod:`.handlers`), ``workbench
serve`` (its browser login: :mod:`.login_page`), the Jupyter server extension (enabled as
``workbench.server``), the health and metrics pages, a request log with no secret and the
denials to the audit trail (:mod:`.access_log`); and the door of a Jupyter server serving
dashboards: token logins (:mod:`.login`), the viewers' authorizer (:mod:`.authorizer`,
with :mod:`workbench.dashboard.viewers`) and kernel channels (:mod:`.viewer_channels`).
Its clients are in :mod:`workbench.client`."""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter loads :mod:`workbench.server.extension` (imported only by Jupyter)."""
    return [{"module": "workbench.server.extension"}]
