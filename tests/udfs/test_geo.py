"""Dagger's geo UDFs, called through Spark SQL, against independent references.

S2Id / S2Token / S2AreaInKm2 are checked against s2sphere, GeoHash against known vectors and a
Python encoder written here (exact arithmetic, a different method), Distance against Dagger's
own test vectors and a chord-length computation. The vectors quoted from Dagger come from its
unit tests (dagger-functions ``S2IdTest``, ``GeoHashTest``, ``S2AreaInKm2Test``, ``DistanceTest``).
"""

from __future__ import annotations

import math
import random
import struct
import threading
import zipfile
from fractions import Fraction

import pytest
import s2sphere
import sqlglot
from geo_reference import haversine_km

from workbench.exceptions import SetupError
from workbench.runtime import udf_jar as jvm
from workbench.udfs import UDFS

pytestmark = pytest.mark.integration

SEED = 20240613
LEVELS = (0, 1, 5, 10, 13, 20, 24, 30)
EARTH_KM2 = 510072000
MONAS = (-6.175392, 106.827153)  # Jakarta's National Monument
SOEKARNO_HATTA = (-6.125567, 106.655897)  # Jakarta airport (CGK)

AMERICAS = [
    (40.7128, -74.0060),
    (-23.5505, -46.6333),
    (61.2181, -149.9003),
    (19.4326, -99.1332),
    (-54.8019, -68.3030),
    (0.0, -90.0),
]
POLES = [
    (89.9999, 0.0),
    (90.0, 0.0),
    (89.95, -120.5),
    (-89.9999, 45.0),
    (-90.0, 0.0),
    (-89.5, 170.25),
]
ANTIMERIDIAN = [
    (0.0, 180.0),
    (0.0, -180.0),
    (45.0, 179.9999),
    (-45.0, -179.9999),
    (10.0, 180.0),
    (-10.0, -180.0),
    (65.5, 179.9999),
    (-33.3, -180.0),
]
FACE_CORNERS = [(0.0, 0.0), (0.0, 45.0), (0.0, -45.0), (35.26438968, 45.0), (0.0, 90.0)]
SPECIAL = [(-6.170024, 106.8243203), *AMERICAS, *POLES, *ANTIMERIDIAN, *FACE_CORNERS]


def random_points(n: int, seed: int = SEED) -> list[tuple[float, float]]:
    """Points uniform on the sphere (so polar faces get their share)."""
    rng = random.Random(seed)
    return [(math.degrees(math.asin(rng.uniform(-1, 1))), rng.uniform(-180, 180)) for _ in range(n)]


POINTS = SPECIAL + random_points(3000)


def s2_cell(lat: float, lng: float, level: int) -> s2sphere.CellId:
    return s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(lat, lng)).parent(level)


def signed(cell_id: int) -> int:
    return cell_id - (1 << 64) if cell_id >= 1 << 63 else cell_id


def one(spark, expression: str):
    return spark.sql(f"SELECT {expression} AS v").first()["v"]


@pytest.fixture(scope="module")
def points(spark):
    return spark.createDataFrame(POINTS, "lat double, lng double")


@pytest.fixture(scope="module")
def s2_rows(points):
    ids = [f"S2Id(lat, lng, {lv}) AS id{lv}" for lv in LEVELS]
    tokens = [f"S2Token(lat, lng, {lv}) AS tok{lv}" for lv in LEVELS]
    return points.selectExpr("lat", "lng", *ids, *tokens).collect()


# -- S2Id / S2Token ---------------------------------------------------------------------------


def test_s2id_dagger_vector(spark):
    assert one(spark, "S2Id(-6.170024, 106.8243203, 13)") == "3344474489181175808"
    assert str(signed(s2_cell(-6.170024, 106.8243203, 13).id())) == "3344474489181175808"


def test_s2id_matches_s2sphere_worldwide(s2_rows):
    assert len(s2_rows) == len(POINTS)
    wrong = [
        (r.lat, r.lng, lv, r[f"id{lv}"])
        for r in s2_rows
        for lv in LEVELS
        if r[f"id{lv}"] != str(signed(s2_cell(r.lat, r.lng, lv).id()))
    ]
    assert wrong == []


def test_s2token_matches_s2sphere_worldwide(s2_rows):
    wrong = [
        (r.lat, r.lng, lv, r[f"tok{lv}"])
        for r in s2_rows
        for lv in LEVELS
        if r[f"tok{lv}"] != s2_cell(r.lat, r.lng, lv).to_token()
    ]
    assert wrong == []


def test_s2id_is_negative_exactly_on_faces_4_and_5(s2_rows):
    faces = {(r.lat, r.lng): s2_cell(r.lat, r.lng, 0).face() for r in s2_rows}
    negative = {(r.lat, r.lng) for r in s2_rows if int(r.id13) < 0}
    assert len(negative) > len(s2_rows) // 4
    assert negative == {point for point, face in faces.items() if face >= 4}


@pytest.mark.parametrize(
    "lat, lng", [(0.0, -90.0), (-90.0, 0.0), (-89.9999, 45.0), (19.4326, -99.1332)]
)
def test_s2id_negative_in_the_americas_and_the_south(spark, lat, lng):
    assert int(one(spark, f"S2Id({lat}D, {lng}D, 13)")) < 0


def test_s2id_on_the_antimeridian_and_the_pole_agree_at_coarse_levels(spark):
    # lng 180 is the u = 0 line of face 3, a cell edge at every level: sin(pi) > 0 > sin(-pi)
    # puts 180 and -180 on either side of it (s2sphere and Dagger do the same).
    assert one(spark, "S2Id(10D, 180D, 0)") == one(spark, "S2Id(10D, -180D, 0)")
    assert one(spark, "S2Id(10D, 180D, 13)") != one(spark, "S2Id(10D, -180D, 13)")
    north = {one(spark, f"S2Id(90D, {lng}D, 0)") for lng in (-180, -45, 0, 123, 180)}
    assert north == {str(s2sphere.CellId.from_face_pos_level(2, 0, 0).id())}


def test_s2id_token_and_id_name_the_same_cell(s2_rows):
    for row in s2_rows[:200]:
        for lv in LEVELS:
            assert s2sphere.CellId.from_token(row[f"tok{lv}"]).id() == int(row[f"id{lv}"]) % 2**64


def test_s2_argument_types_are_coerced(spark):
    """Spark does not cast a Java UDF's arguments: decimals, ints and bigints must all work."""
    expected = one(spark, "S2Id(CAST(-6.170024 AS DOUBLE), CAST(106.8243203 AS DOUBLE), 13)")
    assert one(spark, "S2Id(-6.170024, 106.8243203, 13)") == expected  # DECIMAL literals
    assert one(spark, "S2Id(-6.170024, 106.8243203, CAST(13 AS BIGINT))") == expected
    assert one(spark, "S2Id(-6, 106, 13)") == str(signed(s2_cell(-6, 106, 13).id()))
    as_float = struct.unpack("f", struct.pack("f", -6.170024))[0]
    assert one(spark, "S2Token(CAST(-6.170024 AS FLOAT), 106.8243203, 13)") == (
        s2_cell(as_float, 106.8243203, 13).to_token()
    )


def test_s2_string_argument_says_to_cast(spark):
    with pytest.raises(Exception, match="CAST the argument"):
        one(spark, "S2Id('-6.17', 106.82, 13)")


# -- S2AreaInKm2 ------------------------------------------------------------------------------


def test_s2area_dagger_vector(spark):
    assert one(spark, "S2AreaInKm2('3267730965564227584')") == pytest.approx(909.97058, abs=1e-4)


def test_s2area_matches_s2sphere(spark, points):
    ids = [f"S2Id(lat, lng, {lv}) AS id{lv}" for lv in LEVELS]
    areas = [f"S2AreaInKm2(S2Id(lat, lng, {lv})) AS km{lv}" for lv in LEVELS]
    rows = points.limit(500).selectExpr(*ids, *areas).collect()
    for row in rows:
        for lv in LEVELS:
            cell = s2sphere.Cell(s2sphere.CellId(int(row[f"id{lv}"]) % 2**64))
            expected = cell.exact_area() * EARTH_KM2 / (4 * math.pi)
            assert row[f"km{lv}"] == pytest.approx(expected, rel=1e-9), (row, lv)


def test_s2area_of_the_six_faces_is_the_earth(spark):
    faces = [signed(s2sphere.CellId.from_face_pos_level(face, 0, 0).id()) for face in range(6)]
    areas = [one(spark, f"S2AreaInKm2('{face}')") for face in faces]
    assert sum(areas) == pytest.approx(EARTH_KM2, rel=1e-12)
    assert min(areas) == pytest.approx(EARTH_KM2 / 6, rel=1e-12)


def test_s2area_accepts_the_unsigned_id(spark):
    cell = s2_cell(-54.8019, -68.3030, 13)
    assert signed(cell.id()) < 0
    assert one(spark, f"S2AreaInKm2('{cell.id()}')") == one(
        spark, f"S2AreaInKm2('{signed(cell.id())}')"
    )


# -- GeoHash ----------------------------------------------------------------------------------

BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


def geohash_reference(lat: float, lng: float, length: int) -> str:
    """Quantise each coordinate exactly, then interleave the bits (longitude first)."""
    bits = 5 * length
    lng_bits, lat_bits = (bits + 1) // 2, bits // 2
    x = min(int((Fraction(lng) + 180) * 2**lng_bits / 360), 2**lng_bits - 1)
    y = min(int((Fraction(lat) + 90) * 2**lat_bits / 180), 2**lat_bits - 1)
    code = 0
    for i in range(bits):
        source, width = (x, lng_bits) if i % 2 == 0 else (y, lat_bits)
        code = code << 1 | (source >> (width - 1 - i // 2)) & 1
    return "".join(BASE32[(code >> 5 * (length - 1 - k)) & 31] for k in range(length))


@pytest.mark.parametrize(
    "lat, lng, length, expected",
    [
        (57.64911, 10.40744, 11, "u4pruydqqvj"),
        (-6.170024, 106.8243203, 6, "qqguyu"),
        (42.6, -5.6, 5, "ezs42"),
        (-90.0, -180.0, 4, "0000"),
        (90.0, 180.0, 4, "zzzz"),
        (0.0, 0.0, 1, "s"),
    ],
)
def test_geohash_known_vectors(spark, lat, lng, length, expected):
    assert geohash_reference(lat, lng, length) == expected
    assert one(spark, f"GeoHash({lat}D, {lng}D, {length})") == expected


def test_geohash_matches_independent_encoder(points):
    lengths = range(1, 13)
    calls = [f"GeoHash(lat, lng, {n}) AS g{n}" for n in lengths]
    rows = points.selectExpr("lat", "lng", *calls).collect()
    wrong = [
        (r.lat, r.lng, n)
        for r in rows
        for n in lengths
        if r[f"g{n}"] != geohash_reference(r.lat, r.lng, n)
    ]
    assert wrong == []


def test_geohash_wraps_longitude_like_daggers_library(spark):
    assert one(spark, "GeoHash(10D, 190D, 8)") == geohash_reference(10, -170, 8)
    assert one(spark, "GeoHash(10D, -190D, 8)") == geohash_reference(10, 170, 8)
    assert one(spark, "GeoHash(10D, 540D, 8)") == geohash_reference(10, -180, 8)


# -- Distance ---------------------------------------------------------------------------------


def distance_sql(*args: str) -> str:
    """Spark SQL for ``Distance(args)``, through the registry's rewrite."""
    call = UDFS.get("Distance").rewrite([sqlglot.parse_one(a, read="spark") for a in args])
    return call.sql(dialect="spark")


def chord_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance from the straight-line chord between the two unit vectors."""

    def unit(lat: float, lng: float) -> tuple[float, ...]:
        p, q = math.radians(lat), math.radians(lng)
        return math.cos(p) * math.cos(q), math.cos(p) * math.sin(q), math.sin(p)

    chord = math.dist(unit(lat1, lng1), unit(lat2, lng2))
    return 6371 * 2 * math.asin(chord / 2)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((48.8566, 2.3522), (51.5074, 0.1278), 334.5761379805),
        ((12.9716, 77.5946), (6.1751, 106.8650), 3294.208197583382),
    ],
)
def test_distance_dagger_vectors(spark, a, b, expected):
    assert one(spark, distance_sql(*map(str, (*a, *b)))) == pytest.approx(expected, abs=1e-9)


def test_distance_monas_to_soekarno_hatta(spark):
    km = one(spark, distance_sql(*map(str, (*MONAS, *SOEKARNO_HATTA))))
    assert km == pytest.approx(chord_km(*MONAS, *SOEKARNO_HATTA), rel=1e-9)
    assert 18 < km < 22


def test_distance_matches_python_haversine(spark):
    pairs = [(*p, *q) for p, q in zip(random_points(1000, 1), random_points(1000, 2), strict=True)]
    frame = spark.createDataFrame(pairs, "a double, b double, c double, d double")
    rows = frame.selectExpr("a", "b", "c", "d", f"{distance_sql('a', 'b', 'c', 'd')} AS km")
    for row in rows.collect():
        assert row.km == pytest.approx(haversine_km(row.a, row.b, row.c, row.d), rel=1e-9, abs=1e-9)


def test_distance_edges(spark):
    assert one(spark, distance_sql("1.5", "2.5", "1.5", "2.5")) == 0
    assert one(spark, distance_sql("0", "0", "0", "180")) == pytest.approx(math.pi * 6371)
    assert one(spark, distance_sql("0", "0", "1", "0")) == pytest.approx(6371 * math.pi / 180)


# -- nulls and invalid input ------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "S2Id(NULL, 106.8, 13)",
        "S2Id(-6.1, NULL, 13)",
        "S2Id(-6.1, 106.8, NULL)",
        "S2Token(NULL, 106.8, 13)",
        "S2Token(-6.1, 106.8, NULL)",
        "GeoHash(NULL, 106.8, 6)",
        "GeoHash(-6.1, NULL, 6)",
        "GeoHash(-6.1, 106.8, NULL)",
        "S2AreaInKm2(NULL)",
        "S2AreaInKm2(CAST(NULL AS STRING))",
        "S2Id(-6.1, 106.8, 31)",
        "S2Id(-6.1, 106.8, -1)",
        "S2Token(-6.1, 106.8, 99)",
        "S2Id(-6.1, 106.8, 13.5)",
        "S2Id(double('NaN'), 106.8, 13)",
        "S2Id(-6.1, double('Infinity'), 13)",
        "GeoHash(-6.1, 106.8, 0)",
        "GeoHash(-6.1, 106.8, 13)",
        "GeoHash(90.5, 106.8, 6)",
        "GeoHash(double('NaN'), 106.8, 6)",
        "S2AreaInKm2('abc')",
        "S2AreaInKm2('')",
        "S2AreaInKm2('0')",
        "S2AreaInKm2('12.5')",
        "S2AreaInKm2('99999999999999999999999')",
    ],
)
def test_null_or_invalid_input_gives_null(spark, expression):
    assert one(spark, expression) is None


def test_null_distance(spark):
    assert one(spark, distance_sql("NULL", "1", "2", "3")) is None


def test_null_columns_give_null_rows(spark):
    frame = spark.createDataFrame(
        [(None, 106.8, 13), (-6.1, None, 13), (-6.1, 106.8, None), (-6.1, 106.8, 13)],
        "lat double, lng double, level int",
    )
    rows = frame.selectExpr(
        "S2Id(lat, lng, level) AS s",
        "S2Token(lat, lng, level) AS t",
        "GeoHash(lat, lng, level - 7) AS g",
        "S2AreaInKm2(S2Id(lat, lng, level)) AS a",
    ).collect()
    assert [tuple(r) for r in rows[:3]] == [(None, None, None, None)] * 3
    assert None not in tuple(rows[3])


# -- the jar ----------------------------------------------------------------------------------


def test_udf_jars_are_built_once():
    first = jvm.udf_jars()
    again = jvm.udf_jars()
    assert first == again
    assert first[0].name.startswith("workbench-udfs-") and first[0].stat().st_size > 0
    assert any("s2-geometry" in jar.name for jar in first[1:])
    with zipfile.ZipFile(first[0]) as jar:
        names = set(jar.namelist())
    for udf in ("S2Id", "S2Token", "GeoHash", "S2AreaInKm2"):
        assert f"io/daggerworkbench/udf/{udf}.class" in names
        assert UDFS.get(udf).java_class == f"io.daggerworkbench.udf.{udf}"


def test_racing_builds_give_one_valid_jar(tmp_path, monkeypatch):
    s2 = jvm.udf_jars()[1:]
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    results, errors = [], []

    def build():
        try:
            results.append(jvm.udf_jar(s2))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(set(results)) == 1
    assert zipfile.ZipFile(results[0]).testzip() is None
    assert [p.name for p in results[0].parent.iterdir()] == [results[0].name]


def test_compile_error_is_a_setup_error_with_javac_output(tmp_path, monkeypatch):
    source = tmp_path / "java" / "Broken.java"
    source.parent.mkdir()
    source.write_text("public class Broken { int x = }\n")
    monkeypatch.setattr(jvm, "JAVA_SOURCES", source.parent)
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    with pytest.raises(SetupError, match="Broken.java") as err:
        jvm.udf_jar([])
    assert "illegal start of expression" in str(err.value)


def test_missing_javac_is_a_setup_error(tmp_path, monkeypatch):
    s2 = jvm.udf_jars()[1:]
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SetupError, match="install a JDK"):
        jvm.udf_jar(s2)
