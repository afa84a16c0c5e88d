"""The deck.gl JSON of a map, without ``pydeck.Deck``.

pydeck 0.9's ``Deck`` also opens a Jupyter widget (``@deck.gl/jupyter-widget``) whenever
ipywidgets is installed, and no front end here has that widget's extension: Voila and
JupyterLab log "No version of module @deck.gl/jupyter-widget is registered". So the map
keeps pydeck's layers (their JSON is exactly what deck.gl's JSON converter reads) and
writes the few top-level keys itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from workbench.atlas.styles import Basemap


@dataclass
class Deck:
    layers: list[Any]  # pydeck.Layer
    view_state: dict[str, float]
    basemap: Basemap
    tooltip: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "initialViewState": self.view_state,
            "layers": [json.loads(layer.to_json()) for layer in self.layers],
            "views": [{"@@type": "MapView", "controller": True}],
        }
        if self.basemap.provider:
            data |= {"mapProvider": self.basemap.provider, "mapStyle": self.basemap.style}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))
