"""Small widget helpers shared by the Composer and the live preview: labels that are not
cut off, with the full description as a tooltip, and showing any result as a widget."""

from __future__ import annotations

import html
import io
from typing import Any

import ipywidgets as W

#: Wide enough for every short label the forms use ("Watermark delay", "Consumer group").
LABEL_STYLE = {"description_width": "9.5em"}


def labelled(widget: W.Widget, label: str, tooltip: str = "") -> Any:
    """``widget`` with a short ``label`` in the wide label style; ``tooltip`` (default: the
    label) says in full what the field means."""
    widget.description = label
    widget.tooltip = tooltip or label
    widget.style.description_width = LABEL_STYLE["description_width"]
    return widget


def as_widget(obj: Any) -> W.Widget:
    """A widget showing ``obj``: widgets as they are, HTML, images and matplotlib figures."""
    if isinstance(obj, W.Widget):
        return obj
    if hasattr(obj, "savefig"):
        buffer = io.BytesIO()
        obj.savefig(buffer, format="png", bbox_inches="tight")
        return W.Image(value=buffer.getvalue(), format="png")
    if hasattr(obj, "_repr_html_"):
        return W.HTML(obj._repr_html_())
    if hasattr(obj, "_repr_svg_"):
        return W.HTML(obj._repr_svg_())
    if hasattr(obj, "_repr_png_"):
        return W.Image(value=obj._repr_png_(), format="png")
    if isinstance(obj, str):
        return W.HTML(obj)
    return W.HTML(f"<pre>{html.escape(repr(obj))}</pre>")
