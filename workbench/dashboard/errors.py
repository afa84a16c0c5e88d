"""What the dashboard tells a city head when it has nothing to show: typed, one sentence
each, never a traceback."""

from __future__ import annotations

from workbench.exceptions import WorkbenchError


class StoreError(WorkbenchError):
    """The results store cannot answer; ``store`` names it (kind and address)."""

    def __init__(self, store: str, message: str):
        self.store = store
        super().__init__(message)


class StoreUnreachableError(StoreError):
    """No answer from the store's server, or its folder does not exist."""


class StoreEmptyError(StoreError):
    """The store answers but holds no results for what was asked."""


class AreaNotAllowedError(WorkbenchError):
    """A service area outside the ones this dashboard may show (a viewer's areas)."""

    def __init__(self, area: str, allowed: list[str]):
        self.area, self.allowed = area, allowed
        super().__init__(
            f"This dashboard shows only {', '.join(allowed)}; '{area[:40]}' is not one of "
            "them. Ask an admin to add the city to your viewer entry in the teams file."
        )


class DashboardLoginError(WorkbenchError):
    """``workbench dashboard`` behind a login has nobody to let in (no tokens)."""
