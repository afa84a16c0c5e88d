"""A progress bar for sampling: an ipywidgets bar in a kernel, a text line elsewhere.

:func:`bar` returns a callable taking :class:`workbench.lab.sampling.SampleProgress`, to pass as
``sample(..., progress=bar("booking"))``; ``close()`` marks it done.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from workbench.lab.sampling import SampleProgress

_TEXT_EVERY_S = 1.0


def in_kernel() -> bool:
    """Whether a Jupyter kernel (a frontend that can show widgets) runs this code."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def describe(progress: SampleProgress) -> str:
    if progress.duration_s:
        return f"tail {progress.elapsed_s:.0f}/{progress.duration_s:g}s: {progress.read:,} records"
    total = f" / {progress.total:,}" if progress.total is not None else ""
    return f"{progress.read:,}{total} records"


class WidgetBar:
    """An ipywidgets progress bar with a label, displayed when made."""

    def __init__(self, title: str):
        import ipywidgets as widgets
        from IPython.display import display

        self.bar = widgets.FloatProgress(value=0.0, min=0.0, max=1.0, description=title)
        self.label = widgets.Label("starting")
        display(widgets.HBox([self.bar, self.label]))

    def __call__(self, progress: SampleProgress) -> None:
        self.bar.value = progress.fraction
        self.label.value = describe(progress)

    def close(self, summary: str = "") -> None:
        self.bar.value, self.bar.bar_style = 1.0, "success"
        if summary:
            self.label.value = summary


class TextBar:
    """A progress line on stderr, rewritten at most once a second."""

    def __init__(self, title: str, stream: Any = None):
        self.title, self.stream, self._shown = title, stream or sys.stderr, 0.0

    def __call__(self, progress: SampleProgress) -> None:
        now = time.monotonic()
        if now - self._shown >= _TEXT_EVERY_S:
            self._shown = now
            print(f"\r{self.title}: {describe(progress)}", end="", file=self.stream, flush=True)

    def close(self, summary: str = "") -> None:
        if self._shown:
            print(f"\r{self.title}: {summary or 'done'}", file=self.stream, flush=True)


def bar(title: str) -> WidgetBar | TextBar:
    if in_kernel():
        try:
            return WidgetBar(title)
        except ImportError:
            pass
    return TextBar(title)
