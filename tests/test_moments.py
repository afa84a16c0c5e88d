"""Moments as epoch milliseconds: datetimes (naive = UTC), ISO-8601 text, epoch ms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from workbench.moments import epoch_ms

pytestmark = pytest.mark.unit

T0 = datetime(2024, 1, 2, 3, 4, 5, 678000)  # naive: UTC
T0_MS = 1704164645678


def test_a_naive_datetime_is_utc():
    assert epoch_ms(T0) == epoch_ms(T0.replace(tzinfo=UTC)) == T0_MS


@pytest.mark.parametrize(
    "moment",
    [
        T0.replace(tzinfo=UTC).astimezone(timezone(timedelta(hours=7))),
        "2024-01-02T03:04:05.678Z",
        "2024-01-02 03:04:05.678Z",  # Flink's CSV text
        "2024-01-02T10:04:05.678+07:00",
        "2024-01-02T03:04:05.678",  # no zone: UTC
        " 1704164645678 ",
        T0_MS,
    ],
)
def test_every_spelling_of_one_moment(moment):
    assert epoch_ms(moment) == T0_MS


def test_below_a_millisecond_is_dropped():
    assert epoch_ms(T0 + timedelta(microseconds=999)) == T0_MS


def test_text_that_is_no_time_says_what_to_give():
    with pytest.raises(ValueError, match="'yesterday' is not a time: give ISO-8601 or epoch ms"):
        epoch_ms("yesterday")
