"""Moments as epoch milliseconds (Kafka's and InfluxDB's unit): from a datetime (naive =
UTC), ISO-8601 text or epoch milliseconds. Durations are :mod:`workbench.durations`."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_DIGITS = re.compile(r"-?\d+")


def epoch_ms(moment: datetime | int | str) -> int:
    """Milliseconds since the epoch at ``moment``: a datetime (naive = UTC), ISO-8601 text
    (``Z`` for UTC) or epoch milliseconds (a number or its digits). ValueError for other
    text."""
    if isinstance(moment, str):
        moment = _parse(moment)
    if isinstance(moment, int):
        return moment
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (aware - _EPOCH) // _MS


def _parse(text: str) -> datetime | int:
    if _DIGITS.fullmatch(text.strip()):
        return int(text)
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"'{text}' is not a time: give ISO-8601 or epoch ms") from None
