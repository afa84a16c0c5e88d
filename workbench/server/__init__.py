"""The job service over HTTP: handlers, ``workbench serve``, the Jupyter server extension
(enabled as ``workbench.server``) and the client with its embedded default; and the door
of a Jupyter server serving dashboards: token logins (:mod:`.login`), the viewers'
authorizer (:mod:`.authorizer`, :mod:`.viewers`) and kernel channels
(:mod:`.viewer_channels`)."""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter loads :mod:`workbench.server.extension` (imported only by Jupyter)."""
    return [{"module": "workbench.server.extension"}]
