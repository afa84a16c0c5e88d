"""Starting Spark: how long each phase took, and a start in the background.

:class:`StartTimes` is what :func:`workbench.runtime.spark.session` measured of the last start
(the JVM, the SparkContext, the session, the UDFs); the CLI prints its :meth:`~StartTimes.line`
(``spark: started in 4.6s (JVM 1.1s, ...)``) on stderr. :class:`BackgroundStart` runs
a start in a daemon thread (the notebook kernel begins one as it loads, so Spark is up or
nearly so when the first ``%%dagger`` asks for it), then optional work on the session (the
kernel's preview warm-up): :meth:`~BackgroundStart.wait` returns the session as soon as it
is up, or raises :class:`~workbench.exceptions.SparkStartError` saying why, and never waits
longer than its timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.exceptions import SparkStartError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: How long a caller waits for a background start before giving up with an error.
WAIT_S = 300.0


@dataclass
class StartTimes:
    """Seconds per phase of one Spark start, in order."""

    phases: dict[str, float] = field(default_factory=dict)
    #: ``time.time()`` when the session was ready (0: not yet).
    ready_at: float = 0.0

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.perf_counter() - started

    @property
    def total(self) -> float:
        return sum(self.phases.values())

    def line(self) -> str:
        parts = ", ".join(f"{name} {s:.1f}s" for name, s in self.phases.items())
        return f"spark: started in {self.total:.1f}s ({parts})"


class BackgroundStart:
    """``start()`` (a function returning a session) run once in a daemon thread, then
    ``after(session)`` in the same thread (work that must not delay the session's use)."""

    def __init__(
        self,
        start: Callable[[], SparkSession],
        what: str = "Spark",
        after: Callable[[SparkSession], None] | None = None,
    ) -> None:
        self._start, self._what, self._after = start, what, after
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._result: dict[str, Any] = {}
        self.began_at = 0.0

    def begin(self) -> None:
        if self._thread is not None:
            return
        self.began_at = time.time()
        self._thread = threading.Thread(target=self._run, name="spark-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result["session"] = session = self._start()
        except BaseException as err:  # noqa: BLE001 - reported to the first caller
            self._result["error"] = err
            return
        finally:
            self._ready.set()
        if self._after is not None:
            self._after(session)

    @property
    def begun(self) -> bool:
        return self._thread is not None

    @property
    def done(self) -> bool:
        """The start has ended, with a session or an error (``after`` may still run)."""
        return self._ready.is_set()

    def join(self, timeout_s: float = WAIT_S) -> None:
        """Wait for the start and for ``after`` to end."""
        if self._thread is not None:
            self._thread.join(timeout_s)

    def wait(self, timeout_s: float = WAIT_S, hint: str = "") -> SparkSession:
        """The session the background start made; raises :class:`SparkStartError` when it
        failed (once: the caller may start Spark itself afterwards) or is still running
        after ``timeout_s``."""
        if self._thread is None:
            raise SparkStartError(f"{self._what} was not started in the background")
        if not self._ready.wait(timeout_s):
            raise SparkStartError(
                f"{self._what} has been starting for {time.time() - self.began_at:.0f}s and is "
                f"not up yet.{hint}"
            )
        if "error" in self._result:
            err = self._result.pop("error")
            detail = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raise SparkStartError(
                f"{self._what} failed to start in the background: "
                f"{type(err).__name__}: {detail}.{hint} Run the cell again to retry."
            ) from err
        return self._result["session"]
