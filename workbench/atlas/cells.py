"""S2 cells as the map needs them: ids or tokens in, tokens (for deck.gl's S2Layer) out.

A cell id is a 64-bit unsigned number. Dagger's ``S2Id`` and Spark's ``long`` hold it as a
*signed* 64-bit value, so ids of the faces 4 and 5 (the top bit set) come as negative
numbers; they are the same cells. A token is the id in hex without its trailing zeros
(``2e69f4c``), and ``X`` for the id 0 (no cell). Values may be ints, numpy ints, decimal
strings (``"3344469541378850816"``, ``"-5764607523034234880"``) or tokens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache
from numbers import Integral

from workbench.atlas.errors import AtlasError

MASK = (1 << 64) - 1
_FACE_BITS = 61
_TOKEN = re.compile(r"^[0-9a-fA-F]{1,16}$")
_DECIMAL = re.compile(r"^-?[0-9]+$")


def unsigned(cell_id: int) -> int:
    """The unsigned 64-bit id of a cell given as a signed or unsigned 64-bit integer."""
    if not -(1 << 63) <= cell_id <= MASK:
        raise AtlasError(f"{cell_id} is not a 64-bit S2 cell id.")
    return cell_id & MASK


def signed(cell_id: int) -> int:
    """The id as Spark and Dagger's ``S2Id`` hold it: a signed 64-bit integer."""
    value = unsigned(cell_id)
    return value - (1 << 64) if value >= 1 << 63 else value


def is_valid(cell_id: int) -> bool:
    """Whether the unsigned id names a cell: face 0-5 and its lowest set bit at an even place."""
    if not 0 < cell_id <= MASK or cell_id >> _FACE_BITS > 5:
        return False
    lowest = (cell_id & -cell_id).bit_length() - 1
    return lowest % 2 == 0


def level(cell_id: int) -> int:
    """The level (0-30) of a valid unsigned cell id."""
    return 30 - ((cell_id & -cell_id).bit_length() - 1) // 2


def id_to_token(cell_id: int) -> str:
    """The token of a cell id (signed or unsigned)."""
    value = unsigned(cell_id)
    if value == 0:
        return "X"
    return f"{value:016x}".rstrip("0")


def token_to_id(token: str) -> int:
    """The unsigned id of a token."""
    if token == "X":
        return 0
    if not _TOKEN.match(token):
        raise AtlasError(f"'{token}' is not an S2 token (1 to 16 hex digits).")
    return int(token.ljust(16, "0"), 16)


def to_token(value: object) -> str:
    """The token of one cell value: an id (int, decimal string) or a token; checked."""
    cell_id = to_id(value)
    if not is_valid(cell_id):
        raise AtlasError(
            f"{value!r} is not an S2 cell: ids name a face 0-5 and a level 0-30. "
            "Map a column of S2Id(...) results or S2 tokens."
        )
    return id_to_token(cell_id)


def to_id(value: object) -> int:
    """The unsigned id of one cell value (int, numpy int, decimal string or token)."""
    if isinstance(value, bool) or value is None:
        raise AtlasError(f"{value!r} is not an S2 cell id or token.")
    if isinstance(value, Integral):
        return unsigned(int(value))
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        raise AtlasError(
            f"{value!r} is an S2 id stored as a float, which has lost its low bits. "
            "Keep ids as int64 (or strings) end to end."
        )
    if isinstance(value, str):
        return _string_to_id(value.strip())
    raise AtlasError(f"{value!r} ({type(value).__name__}) is not an S2 cell id or token.")


def _string_to_id(text: str) -> int:
    """Decimal id or token: a digits-only string is a decimal id when that id is a valid
    cell (S2Id's output), otherwise a token."""
    if _DECIMAL.match(text):
        number = int(text)
        if -(1 << 63) <= number <= MASK and is_valid(number & MASK):
            return number & MASK
        if text.startswith("-"):
            raise AtlasError(f"'{text}' is not an S2 cell id.")
    return token_to_id(text)


def tokens(values: Iterable[object]) -> list[str]:
    """Tokens for a column of cell values, each distinct value converted once."""
    return [_cached_token(v) if isinstance(v, str | int) else to_token(v) for v in values]


@lru_cache(maxsize=65536)
def _cached_token(value: str | int) -> str:
    return to_token(value)


@lru_cache(maxsize=65536)
def center(token: str) -> tuple[float, float]:
    """(latitude, longitude) in degrees of the centre of the cell a token names."""
    import s2sphere

    point = s2sphere.CellId(token_to_id(token)).to_lat_lng()
    return point.lat().degrees, point.lng().degrees


@lru_cache(maxsize=65536)
def corners(token: str) -> tuple[tuple[float, float], ...]:
    """The cell's four corners as (longitude, latitude) in degrees, counter-clockwise."""
    import s2sphere

    cell = s2sphere.Cell(s2sphere.CellId(token_to_id(token)))
    points = (s2sphere.LatLng.from_point(cell.get_vertex(k)) for k in range(4))
    return tuple((p.lng().degrees, p.lat().degrees) for p in points)
