"""Dagger's geo functions: S2 cells and geohashes on the JVM, distance as built-in SQL.

The JVM functions are the Java classes in ``udfs/java/io/daggerworkbench/udf`` (built by
:mod:`workbench.runtime.udf_jar`); ``Distance`` is rewritten into Spark's own math functions.
"""

from __future__ import annotations

from workbench.udfs.registry import UDFS, JvmFunction, Rewrite

_PACKAGE = "io.daggerworkbench.udf"
_POINT = ("lat DOUBLE", "lng DOUBLE")

EARTH_RADIUS_KM = 6371


def _radians(degrees: str) -> str:
    return f"(({degrees}) * pi() / 180)"  # as Dagger converts, to the last bit


def _haversine_km() -> str:
    """Dagger's Distance, operation for operation: haversine in km with R = 6371.

    The arguments are cast to DOUBLE first (decimal literals would otherwise subtract
    exactly). One change: ``1 - a`` is clamped at 0, so antipodal points give pi * R, not NaN.
    """
    lat1, lng1, lat2, lng2 = (f"CAST({{{i}}} AS DOUBLE)" for i in range(4))
    dlat, dlng = _radians(f"{lat2} - {lat1}"), _radians(f"{lng2} - {lng1}")
    half_dlat, half_dlng = f"sin({dlat} / 2)", f"sin({dlng} / 2)"
    a = (
        f"({half_dlat} * {half_dlat} + cos({_radians(lat1)}) * cos({_radians(lat2)})"
        f" * {half_dlng} * {half_dlng})"
    )
    return f"{EARTH_RADIUS_KM} * (2 * atan2(sqrt({a}), sqrt(greatest(0, 1 - {a}))))"


#: S2 cell levels run from 0 (a cube face) to 30 (about 1 cm2); geohashes have 1..12 chars.
S2_LEVELS = (0, 30)
GEOHASH_LENGTHS = (1, 12)


def _jvm(name: str, params: tuple[str, ...], returns: str, doc: str, ranges=()) -> JvmFunction:
    return JvmFunction(
        name=name,
        params=params,
        returns=returns,
        doc=doc,
        ranges=ranges,
        java_class=f"{_PACKAGE}.{name}",
    )


S2ID = UDFS.add(
    _jvm(
        "S2Id",
        (*_POINT, "level INT"),
        "string",
        "Id of the level-`level` (0..30) S2 cell holding the point, as a signed 64-bit decimal.",
        ((2, *S2_LEVELS),),
    )
)
S2TOKEN = UDFS.add(
    _jvm(
        "S2Token",
        (*_POINT, "level INT"),
        "string",
        "Token (short hex) of the level-`level` (0..30) S2 cell holding the point, for maps.",
        ((2, *S2_LEVELS),),
    )
)
GEOHASH = UDFS.add(
    _jvm(
        "GeoHash",
        (*_POINT, "length INT"),
        "string",
        "Base32 geohash of the point with `length` (1..12) characters.",
        ((2, *GEOHASH_LENGTHS),),
    )
)
S2AREA = UDFS.add(
    _jvm(
        "S2AreaInKm2",
        ("s2id STRING",),
        "double",
        "Area in km2 of the S2 cell whose id S2Id returned.",
    )
)
DISTANCE = UDFS.add(
    Rewrite(
        name="Distance",
        params=("lat1 DOUBLE", "lng1 DOUBLE", "lat2 DOUBLE", "lng2 DOUBLE"),
        returns="double",
        doc="Great-circle (haversine) distance in km between two points.",
        template=_haversine_km(),
    )
)
