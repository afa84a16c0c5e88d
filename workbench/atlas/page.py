"""The HTML page of a map: deck.gl, the legend beside the map, a note on the map.

The page references no URL: a standalone page (``to_html``) inlines the deck.gl bundle
(and, with a basemap, its stylesheet), so it opens from a file or an e-mail with no
network. A page shown in a notebook or the dashboard (an iframe ``srcdoc``) does not
inline it: it takes deck.gl's source from its parent page (:data:`SHARED`), which loads it
once (:mod:`workbench.atlas.shared`). Only a basemap style, when one is chosen, fetches
anything; when it cannot, the note says so and the bundled geography shows.
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
.atlas-note { position: absolute; left: 8px; bottom: 8px; z-index: 2; padding: 3px 8px;
  background: rgba(255,255,255,.9); border: 1px solid #c9a227; border-radius: 4px;
  font-size: 12px; color: #5a4500; }
.atlas-note[hidden] { display: none; }
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
$library
</head>
<body>
<div class="atlas">
<div id="deck-container"><div class="atlas-note" id="atlas-note" hidden></div></div>
$legend
</div>
<script>
(function () {
  const spec = $deck_json;
  const basemap = $basemap;
  const note = document.getElementById('atlas-note');
  function show(text) { note.textContent = text; note.hidden = false; }
  if ($message) show($message);
  function library() {
    if (typeof createDeck === 'function') return Promise.resolve();
    let shared = null;
    try { shared = window.parent !== window && window.parent[$shared_name]; } catch (e) {}
    if (!shared) return Promise.reject(new Error($missing));
    return Promise.resolve(shared).then(function (source) {
      const script = document.createElement('script');
      script.textContent = source;
      document.head.appendChild(script);
    });
  }
  function online() {
    if (!basemap.probe) return Promise.resolve(false);
    const stop = new AbortController();
    const timer = setTimeout(function () { stop.abort(); }, 4000);
    return fetch(basemap.probe, {signal: stop.signal})
      .then(function (answer) { return answer.ok; }, function () { return false; })
      .finally(function () { clearTimeout(timer); });
  }
  Promise.all([library(), online()]).then(function (done) {
    const json = Object.assign({}, spec);
    if (basemap.probe && done[1]) {
      json.layers = spec.layers.filter(function (l) { return !basemap.offline.includes(l.id); });
    } else if (basemap.probe) {
      delete json.mapProvider; delete json.mapStyle;
      show('basemap "' + basemap.name + '" unavailable offline — showing bundled coastlines');
    }
    window.deckInstance = createDeck({
      container: document.getElementById('deck-container'),
      jsonInput: json,
      tooltip: $tooltip,
      mapboxApiKey: $mapbox_key,
      customLibraries: null,
      configuration: null
    });
  }).catch(function (err) { show(String(err.message || err)); });
})();
</script>
</body>
</html>
""")

#: The window property a notebook page or Voila page keeps deck.gl's source in (a Promise
#: of the text, or the text), so maps in iframes load it from there instead of inlining it.
SHARED = "__workbenchDeck"
_MISSING = (
    "The map library (deck.gl) is not loaded in this page (a reloaded page or a saved "
    "notebook): run atlas.load(), then this cell again; or save the map with .to_html()."
)


def render_page(
    *,
    title: str,
    deck_json: str,
    tooltip: dict | bool,
    legend_html: str,
    script: str | None,
    background: str,
    basemap: dict | None = None,
    extra_css: str = "",
    mapbox_key: str | None = None,
    message: str = "",
) -> str:
    """The page; ``script`` is deck.gl's bundle to inline, or None to take it from the
    parent page (:data:`SHARED`), as maps in notebooks and the dashboard do. ``message``:
    a note on the map from the start (``no results`` on a map with no cells)."""
    library = f"<script>{script}</script>" if script is not None else ""
    return _PAGE.substitute(
        title=html.escape(title),
        background=background,
        extra_css=extra_css,
        library=library,
        legend=legend_html,
        deck_json=_script_safe(deck_json),
        basemap=_script_safe(json.dumps(basemap or {})),
        tooltip=_script_safe(json.dumps(tooltip)),
        mapbox_key=json.dumps(mapbox_key),
        shared_name=json.dumps(SHARED),
        missing=json.dumps(_MISSING),
        message=_script_safe(json.dumps(message)),
    )


def _script_safe(text: str) -> str:
    """JSON inside a ``<script>``: no ``</`` that could close it early."""
    return text.replace("</", "<\\/")


def legend_html(title: str, note: str, bins: Sequence[Bin]) -> str:
    rows = "".join(
        f'<tr><td><span class="swatch" style="background:{hex_color(b.color)}"></span></td>'
        f"<td>{range_html(b, i == len(bins) - 1)}</td>"
        f'<td class="count">{b.count:,}</td></tr>'
        for i, b in enumerate(bins)
    )
    body = f"<table>{rows}</table>" if bins else "<p>no results</p>"
    return (
        f'<aside class="atlas-legend"><h3>{html.escape(title)}</h3>'
        f'<div class="note">{html.escape(note)}</div>{body}</aside>'
    )


def range_html(b: Bin, last: bool) -> str:
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
