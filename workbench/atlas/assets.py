"""The JavaScript and CSS a map page inlines, so it loads nothing from a CDN.

* deck.gl: the ``@deck.gl/jupyter-widget`` bundle (deck.gl 9.3 with its JSON converter,
  ``createDeck`` and the basemap libraries) that pydeck's wheel ships for its offline mode,
  built for exactly the deck.gl version that pydeck's JSON targets. (That package is not
  on the npm registry, so the wheel, fetched from PyPI, is its source.)
* the basemap CSS, only for pages with a basemap: ``mapbox-gl`` 1.13.2's stylesheet (the
  version the bundle inlines for CARTO and Mapbox styles), from npm.

:func:`fetch_assets` prepares both (``workbench setup``); it is idempotent.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import util
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.runtime.npm import package_file

MAPBOX_GL = ("mapbox-gl", "1.13.2", "dist/mapbox-gl.css")
_BUNDLE = Path("nbextension", "static", "index.js")


def deck_bundle_path() -> Path:
    """The deck.gl bundle inside the installed pydeck."""
    spec = util.find_spec("pydeck")
    if spec is None or spec.origin is None:
        raise SetupError("Maps need pydeck: pip install 'pydeck>=0.9,<0.10'.")
    path = Path(spec.origin).parent / _BUNDLE
    if not path.exists():
        raise SetupError(
            f"pydeck has no deck.gl bundle at {path}; reinstall it: "
            "pip install --force-reinstall 'pydeck>=0.9,<0.10'."
        )
    return path


@lru_cache(maxsize=1)
def deck_script() -> str:
    """The bundle's JavaScript, safe to put inside a ``<script>`` element."""
    return deck_bundle_path().read_text(encoding="utf-8").replace("</script", "<\\/script")


def basemap_css_path() -> Path:
    """The basemap stylesheet, fetched from npm the first time."""

    name, version, member = MAPBOX_GL
    return package_file(name, version, member)


@lru_cache(maxsize=1)
def basemap_css() -> str:
    return basemap_css_path().read_text(encoding="utf-8").replace("</style", "<\\/style")


def fetch_assets() -> list[Path]:
    """Everything a map page inlines, ready on disk (for ``workbench setup``)."""
    return [deck_bundle_path(), basemap_css_path()]
