"""Atlas maps: S2 choropleths drawn with deck.gl (pydeck), working with no network.

``choropleth(frame, metric=...)`` returns an :class:`AtlasMap` that a notebook shows (the
lab extension draws its layer data, with no kernel) and ``to_html`` saves as one
standalone page. pydeck is imported only when a map is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.atlas.errors import AtlasError

if TYPE_CHECKING:
    from workbench.atlas.map import AtlasMap

__all__ = ["AtlasError", "AtlasMap", "choropleth", "load"]


def choropleth(data: Any, **options: Any) -> AtlasMap:
    """See :func:`workbench.atlas.map.choropleth`."""
    from workbench.atlas.map import choropleth as draw

    return draw(data, **options)


def load() -> bool:
    """Send deck.gl to this notebook page again (after the page was reloaded), for the city
    dashboard's maps shown in a notebook; maps themselves need none (see ``atlas.mime``)."""
    from workbench.atlas.shared import ensure_loaded

    return ensure_loaded(force=True)


def __getattr__(name: str) -> Any:
    if name == "AtlasMap":
        from workbench.atlas.map import AtlasMap

        return AtlasMap
    raise AttributeError(name)
