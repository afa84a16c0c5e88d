"""The standalone HTML page of a map: deck.gl inlined, the legend beside the map.

The page references no URL: the deck.gl bundle (and, with a basemap, its stylesheet) is
inlined, so it opens from a file, an e-mail or an iframe ``srcdoc`` with no network.
Only a basemap style, when one is chosen, fetches tiles.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from string import Template

from workbench.atlas.scales import Bin, hex_color

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
html, body { margin: 0; height: 100%; font: 13px/1.4 system-ui, sans-serif; color: #222; }
.atlas { display: flex; height: 100%; background: $background; }
#deck-container { position: relative; flex: 1 1 auto; min-width: 0; height: 100%; }
.atlas-legend { flex: 0 0 190px; padding: 10px 12px; background: #fff; overflow: auto;
  border-left: 1px solid #ddd; }
.atlas-legend h3 { margin: 0 0 2px; font-size: 14px; }
.atlas-legend .note { color: #666; margin-bottom: 8px; }
.atlas-legend table { border-collapse: collapse; }
.atlas-legend td { padding: 2px 4px; white-space: nowrap; }
.atlas-legend .swatch { width: 18px; height: 12px; display: inline-block;
  border: 1px solid rgba(0,0,0,.2); }
.atlas-legend .count { color: #888; text-align: right; }
$extra_css
</style>
<script>$script</script>
</head>
<body>
<div class="atlas">
<div id="deck-container"></div>
$legend
</div>
<script>
const deckInstance = createDeck({
  container: document.getElementById('deck-container'),
  jsonInput: $deck_json,
  tooltip: $tooltip,
  mapboxApiKey: $mapbox_key,
  customLibraries: null,
  configuration: null
});
</script>
</body>
</html>
""")


def render_page(
    *,
    title: str,
    deck_json: str,
    tooltip: dict | bool,
    legend_html: str,
    script: str,
    background: str,
    extra_css: str = "",
    mapbox_key: str | None = None,
) -> str:
    return _PAGE.substitute(
        title=html.escape(title),
        background=background,
        extra_css=extra_css,
        script=script,
        legend=legend_html,
        deck_json=_script_safe(deck_json),
        tooltip=_script_safe(json.dumps(tooltip)),
        mapbox_key=json.dumps(mapbox_key),
    )


def _script_safe(text: str) -> str:
    """JSON inside a ``<script>``: no ``</`` that could close it early."""
    return text.replace("</", "<\\/")


def legend_html(title: str, note: str, bins: Sequence[Bin]) -> str:
    rows = "".join(
        f'<tr><td><span class="swatch" style="background:{hex_color(b.color)}"></span></td>'
        f"<td>{_range(b, i == len(bins) - 1)}</td>"
        f'<td class="count">{b.count:,}</td></tr>'
        for i, b in enumerate(bins)
    )
    body = f"<table>{rows}</table>" if bins else "<p>no values</p>"
    return (
        f'<aside class="atlas-legend"><h3>{html.escape(title)}</h3>'
        f'<div class="note">{html.escape(note)}</div>{body}</aside>'
    )


def _range(b: Bin, last: bool) -> str:
    if b.lo == b.hi:
        return fmt(b.lo)
    return f"{fmt(b.lo)} – {fmt(b.hi)}" if last else f"{fmt(b.lo)} – &lt;{fmt(b.hi)}"


def fmt(value: float) -> str:
    """A number for people: thousands separators, at most 3 significant decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}"


def iframe(page: str, height: int) -> str:
    """The page in an ``<iframe srcdoc>``: how notebooks and Voila show it."""
    return (
        f'<iframe class="atlas-frame" srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{height}px;border:0" loading="eager"></iframe>'
    )
