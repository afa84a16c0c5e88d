"""The job service over HTTP: handlers, ``workbench serve``, the Jupyter server extension
(enabled as ``workbench.server``) and the client with its embedded default."""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter loads :mod:`workbench.server.extension` (imported only by Jupyter)."""
    return [{"module": "workbench.server.extension"}]
