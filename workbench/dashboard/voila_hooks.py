"""Voila's hook for dashboards served behind a login (``workbench dashboard`` without
``--local``): ``c.VoilaConfiguration.prelaunch_hook = workbench.dashboard.voila_hooks.prelaunch``.

Before Voila starts a visitor's kernel, the hook looks the logged-in user up in the job
service's teams file; for a dashboard viewer it puts a first, hidden cell into the notebook
that sets ``WORKBENCH_DASHBOARD_AREAS`` to the viewer's service areas, so the dashboard's
city picker lists only those and its reads refuse the others
(:meth:`workbench.dashboard.config.DashboardConfig.allowed_areas`). The cell comes from
the server, not from the request: the viewer cannot change it, and
:class:`workbench.server.viewer_channels.ViewerChannels` keeps a viewer's browser from
running code in that kernel. Everyone else's notebook is left as it is (every city).
"""

from __future__ import annotations

import json
from typing import Any

from workbench.dashboard.config import ENV_PREFIX
from workbench.dashboard.viewers import viewer_areas

AREAS_ENV = ENV_PREFIX + "AREAS"


def areas_cell_source(areas: frozenset[str]) -> str:
    value = json.dumps(",".join(sorted(areas)))
    return f"import os\nos.environ[{json.dumps(AREAS_ENV)}] = {value}  # viewer's areas"


def prelaunch(handler: Any, notebook: Any, cwd: str) -> Any:
    """Voila's ``prelaunch_hook(req, notebook, cwd)``: the notebook, with the viewer's
    areas cell first when the user is a viewer."""
    import nbformat

    areas = viewer_areas(handler, handler.current_user)
    if areas is None:
        return notebook
    cell = nbformat.v4.new_code_cell(areas_cell_source(areas))
    cell.metadata["tags"] = ["workbench-viewer-areas"]
    notebook.cells.insert(0, cell)
    return notebook
