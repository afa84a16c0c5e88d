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
