"""Interrupts while a scenario runs: SIGTERM and SIGHUP raise ``KeyboardInterrupt`` as
Ctrl-C does, so ``finally`` blocks revert the faults; and inside :meth:`Interrupts.held`
(a fault being applied and written to the journal, or being reverted) any of the three
waits until the block is done, so a fault is never left applied without its journal line
or half reverted. Signal handlers only exist in the main thread: elsewhere both are no-ops.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupts:
    def __init__(self) -> None:
        self._held = 0
        self._pending: int | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Route the signals through :meth:`_handle`; the previous handlers come back after."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.signal(s, self._handle) for s in SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._pending = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A signal arriving inside the block interrupts right after it instead."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._pending is not None:
                signum, self._pending = self._pending, None
                raise KeyboardInterrupt(f"signal {signum}")

    def _handle(self, signum: int, _frame: Any) -> None:
        if self._held:
            self._pending = signum
            return
        raise KeyboardInterrupt(f"signal {signum}")


#: The process's one set of handlers (signals are per process).
INTERRUPTS = Interrupts()
