"""Service areas (cities): named bounding boxes from ``workbench/data/service_areas.yaml``.

A cell belongs to an area when its centre lies inside the box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from zoneinfo import ZoneInfo

from workbench.exceptions import UnknownNameError

#: Web Mercator zoom that shows 360 degrees of longitude in 512 px.
_WORLD_ZOOM_PX = 512


@dataclass(frozen=True)
class ServiceArea:
    key: str
    name: str
    south: float
    north: float
    west: float
    east: float
    timezone: str = "UTC"  # the city's clock (IANA name): the dashboard's times

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def contains(self, lat: float, lng: float) -> bool:
        return self.south <= lat <= self.north and self.west <= lng <= self.east

    @property
    def center(self) -> tuple[float, float]:
        return (self.south + self.north) / 2, (self.west + self.east) / 2

    def zoom(self, width_px: int = 800) -> float:
        """A zoom at which the box's width fits ``width_px``."""
        return zoom_for(self.east - self.west, self.north - self.south, width_px)


def zoom_for(lng_span: float, lat_span: float, width_px: int = 800) -> float:
    span = max(lng_span, lat_span * 1.3, 1e-4)
    return max(1.0, min(15.0, math.log2(360.0 * width_px / (_WORLD_ZOOM_PX * span)) - 0.3))


@lru_cache(maxsize=1)
def service_areas() -> dict[str, ServiceArea]:
    """Every known service area by key (``jakarta``, ``bandung``, ...)."""
    import yaml

    text = resources.files("workbench.data").joinpath("service_areas.yaml").read_text()
    return {key: ServiceArea(key=key, **fields) for key, fields in yaml.safe_load(text).items()}


def service_area(area: str | ServiceArea) -> ServiceArea:
    """An area by key or display name (any case), or the area itself."""
    if isinstance(area, ServiceArea):
        return area
    known = service_areas()
    wanted = area.strip().lower()
    for candidate in known.values():
        if wanted in (candidate.key, candidate.name.lower()):
            return candidate
    raise UnknownNameError("service area", area, known)
