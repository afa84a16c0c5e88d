"""The map's own error: data that cannot be drawn as asked, with what to do instead."""

from __future__ import annotations

from workbench.exceptions import WorkbenchError


class AtlasError(WorkbenchError):
    """A frame, column, cell value, scale or style the map cannot use; ``str(err)`` says why."""
