"""What the dashboard says about the dagger whose results it shows: its name and description
(the page's heading) and the window its results are per (the chart's unit, its gaps),
read from the dagger's spec (the ``dagger`` setting). Without a spec, the window is read
off the results: the shortest step between two windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from workbench.sql import intervals
from workbench.sql.parse import parse
from workbench.sql.windows import GROUP_WINDOWS


@dataclass(frozen=True)
class DaggerFacts:
    title: str = ""  # no dagger named: the page's own title only
    description: str = ""
    window: timedelta | None = None  # None: read off the results

    @classmethod
    def load(cls, path: str | Path | None) -> DaggerFacts:
        """The facts of the spec at ``path`` (a bad spec: its one-line SpecError)."""
        if not path:
            return cls()
        from workbench.spec import load

        spec = load(path)
        return cls(spec.name, spec.description, window_of(spec.sql))

    def window_in(self, times: Sequence[datetime]) -> timedelta | None:
        """The dagger's window, else the shortest step between ``times`` (sorted)."""
        if self.window is not None:
            return self.window
        steps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
        return min(steps, default=None)


def window_of(sql: str) -> timedelta | None:
    """The size of the SQL's group window (TUMBLE, HOP: its size; SESSION: None)."""
    from sqlglot import exp

    for call in parse(sql).find_all(exp.Anonymous):
        kind = call.name.upper()
        if kind in GROUP_WINDOWS and kind != "SESSION" and len(call.expressions) >= 2:
            ms = intervals.millis(call.expressions[-1])
            return timedelta(milliseconds=ms) if ms else None
    return None


def window_label(window: timedelta | None) -> str:
    """``5 min``, ``1 h``, ``30 s``; ``window`` when unknown."""
    if window is None:
        return "window"
    seconds = window.total_seconds()
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"
