"""Colour scales: a metric's values into bins, each bin a palette colour, and the legend.

``linear`` bins split the range into equal widths, ``log`` into equal widths of log10
(values must be positive), ``quantile`` so that each bin holds about as many values.
Bins are half open, ``[lo, hi)``, the last one closed; when every value is a whole number
(counts), so are the edges. A palette is a name from
:data:`PALETTES` or a list of colours (``"#rrggbb"`` or ``(r, g, b)``), low to high.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.atlas.errors import AtlasError
from workbench.exceptions import did_you_mean

RGB = tuple[int, int, int]

#: Sequential palettes, low to high (ColorBrewer and matplotlib's perceptual maps).
PALETTES: dict[str, tuple[str, ...]] = {
    "ylorrd": ("#ffffb2", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#b10026"),
    "viridis": ("#440154", "#443983", "#31688e", "#21918c", "#35b779", "#90d743", "#fde725"),
    "magma": ("#000004", "#2c115f", "#721f81", "#b73779", "#f1605d", "#feb078", "#fcfdbf"),
    "blues": ("#eff3ff", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#084594"),
    "greens": ("#edf8e9", "#c7e9c0", "#a1d99b", "#74c476", "#41ab5d", "#238b45", "#005a32"),
}
DEFAULT_PALETTE = "ylorrd"


def palette_colors(palette: str | Sequence[str | Sequence[int]]) -> list[RGB]:
    """The RGB colours of a palette name or list."""
    if isinstance(palette, str):
        key = palette.lower()
        if key not in PALETTES:
            raise AtlasError(f"Unknown palette '{palette}'.{did_you_mean(palette, PALETTES)}")
        return [_rgb(c) for c in PALETTES[key]]
    colors = [_rgb(c) for c in palette]
    if not colors:
        raise AtlasError("A palette needs at least one colour.")
    return colors


def _rgb(color: str | Sequence[int]) -> RGB:
    if isinstance(color, str):
        text = color.lstrip("#")
        if len(text) != 6:
            raise AtlasError(f"Colour '{color}' is not #rrggbb.")
        return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)
    r, g, b = (int(part) for part in list(color)[:3])
    return r, g, b


def hex_color(color: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*color)


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    color: RGB
    count: int


@dataclass(frozen=True)
class Scale:
    """Bin edges (``len(colors) + 1`` of them) and the colour of each bin."""

    kind: str
    edges: tuple[float, ...]
    colors: tuple[RGB, ...]

    def index(self, value: float) -> int:
        """The bin of a value; values outside the edges go to the first or last bin."""
        for i in range(len(self.colors) - 1):
            if value < self.edges[i + 1]:
                return i
        return len(self.colors) - 1

    def color(self, value: float) -> RGB:
        return self.colors[self.index(value)]

    def bins(self, values: Sequence[float]) -> list[Bin]:
        """The legend: each bin's range, colour and how many of ``values`` fall in it."""
        counts = [0] * len(self.colors)
        for value in values:
            counts[self.index(value)] += 1
        return [
            Bin(self.edges[i], self.edges[i + 1], color, counts[i])
            for i, color in enumerate(self.colors)
        ]


def build(kind: str, values: Sequence[float], colors: Sequence[RGB]) -> Scale:
    """The ``kind`` scale (linear, log, quantile) over ``values`` with the palette ``colors``."""
    if kind not in SCALES:
        raise AtlasError(f"Unknown scale '{kind}'.{did_you_mean(kind, SCALES)}")
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return Scale(kind, (0.0, 0.0), (colors[-1],))
    if finite[0] == finite[-1]:
        return Scale(kind, (finite[0], finite[0]), (colors[-1],))
    edges = SCALES[kind](finite, len(colors))
    if all(float(v).is_integer() for v in finite):  # counts: whole-number bin edges
        edges = [edges[0], *(math.ceil(e) for e in edges[1:-1]), edges[-1]]
    edges = _dedupe(edges)
    return Scale(kind, tuple(edges), tuple(_spread(colors, len(edges) - 1)))


def _linear(values: list[float], n: int) -> list[float]:
    lo, hi = values[0], values[-1]
    return [lo + (hi - lo) * i / n for i in range(n)] + [hi]


def _log(values: list[float], n: int) -> list[float]:
    if values[0] <= 0:
        raise AtlasError(
            f"A log scale needs positive values; the metric has {values[0]:g}. "
            "Use scale='linear' or scale='quantile', or filter the zeros out."
        )
    lo, hi = math.log10(values[0]), math.log10(values[-1])
    return [10 ** (lo + (hi - lo) * i / n) for i in range(n)] + [values[-1]]


def _quantile(values: list[float], n: int) -> list[float]:
    size = len(values)  # bin i starts at the value that has i/n of the values below it
    return [values[min(size * i // n, size - 1)] for i in range(n)] + [values[-1]]


SCALES: dict[str, Callable[[list[float], int], list[float]]] = {
    "linear": _linear,
    "log": _log,
    "quantile": _quantile,
}


def _dedupe(edges: list[float]) -> list[float]:
    out = [edges[0]]
    for edge in edges[1:]:
        if edge > out[-1]:
            out.append(edge)
    return out if len(out) > 1 else [edges[0], edges[-1]]


def _spread(colors: Sequence[RGB], n: int) -> list[RGB]:
    """``n`` colours taken evenly from the palette, keeping both ends when n > 1."""
    if n >= len(colors):
        return list(colors)
    if n == 1:
        return [colors[-1]]
    last = len(colors) - 1
    return [colors[round(last * i / (n - 1))] for i in range(n)]
