"""deck.gl loaded once per page, not once per map.

A map shown in a notebook or the dashboard is an iframe whose page does not inline the
4.8 MB deck.gl bundle: it takes the bundle's source from its parent page, where
``window.__workbenchDeck`` holds it (a Promise of the text). Two ways put it there:

* a notebook kernel (JupyterLab, Notebook, papermill): :func:`ensure_loaded`, called when a
  map or the dashboard is displayed, sends the source once per kernel session as an output
  and at once replaces that output with nothing (``update_display``): the page keeps the
  script's effect and the saved notebook does not keep 4.8 MB;
* the dashboard's Voila template (``workbench``) fetches it from the server's static files
  (:func:`voila_static_root`, written by ``workbench setup`` and ``workbench dashboard``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from workbench.atlas import assets
from workbench.atlas.page import SHARED
from workbench.paths import subdir

#: Where the Voila template serves the bundle from, under a JUPYTER_PATH root.
STATIC_MEMBER = Path("voila", "templates", "workbench", "static", "workbench-deck.js")

_sent = False


def loader_html() -> str:
    """A ``<script>`` that puts deck.gl's source on the page (once, whatever runs it)."""
    source = json.dumps(assets.deck_bundle_path().read_text(encoding="utf-8"))
    source = source.replace("</", "<\\/")
    return (
        f'<script class="workbench-deck-loader">window["{SHARED}"] = window["{SHARED}"] || '
        f"Promise.resolve({source});</script>"
    )


def ensure_loaded(force: bool = False) -> bool:
    """In an IPython kernel, send deck.gl to the page once per session (``force``: again,
    for a page reloaded since); True when sent now."""
    global _sent
    if (_sent and not force) or not _in_kernel():
        return False
    from IPython.display import HTML, display

    handle = display(HTML(loader_html()), display_id=True)
    if handle is not None:
        handle.update(HTML(""))
    _sent = True
    return True


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def voila_static_root() -> Path:
    """A JUPYTER_PATH root holding the bundle as the ``workbench`` Voila template's static
    file (``{base_url}voila/templates/workbench/static/workbench-deck.js``)."""

    root = subdir("jupyter")
    target = root / STATIC_MEMBER
    bundle = assets.deck_bundle_path()
    if not target.exists() or target.stat().st_size != bundle.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        shutil.copyfile(bundle, partial)
        partial.replace(target)
    return root
