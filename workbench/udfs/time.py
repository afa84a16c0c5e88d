"""Dagger's time functions, rewritten into Spark built-ins (zone-aware, DST-safe).

Units follow Dagger's code: StartOfWeek/EndOfWeek take and return epoch milliseconds;
StartOfMonth/EndOfMonth take and return epoch seconds. Weeks are ISO weeks (Monday to
Sunday) in every locale.
"""

from __future__ import annotations

import re

from sqlglot import exp

from workbench.udfs.registry import UDFS, Rewrite, substitute

_LOCAL_MS = "from_utc_timestamp(timestamp_millis(CAST({0} AS BIGINT)), {1})"
_LOCAL_S = "from_utc_timestamp(timestamp_seconds(CAST({0} AS BIGINT)), {1})"


def _format_time(args: list[exp.Expr]) -> exp.Expr:
    """SimpleDateFormat patterns mostly equal Spark's; ``aa`` (AM/PM) is ``a`` in Spark."""
    ts, zone, pattern = args
    if isinstance(pattern, exp.Literal) and pattern.is_string:
        pattern = exp.Literal.string(re.sub(r"a+", "a", pattern.this))
    return substitute("date_format(from_utc_timestamp({0}, {1}), {2})", [ts, zone, pattern])


UDFS.add(
    Rewrite(
        name="StartOfWeek",
        params=("epoch_millis BIGINT", "time_zone STRING"),
        returns="bigint",
        doc="Epoch ms of Monday 00:00 of the (ISO) week holding the instant, in `time_zone`.",
        template=f"unix_millis(to_utc_timestamp(date_trunc('WEEK', {_LOCAL_MS}), {{1}}))",
    )
)
UDFS.add(
    Rewrite(
        name="EndOfWeek",
        params=("epoch_millis BIGINT", "time_zone STRING"),
        returns="bigint",
        doc="Epoch ms of the week's last millisecond (Sunday 23:59:59.999) in `time_zone`.",
        template="unix_millis(to_utc_timestamp(date_trunc('WEEK', "
        f"{_LOCAL_MS}) + INTERVAL 7 DAYS, {{1}})) - 1",
    )
)
UDFS.add(
    Rewrite(
        name="StartOfMonth",
        params=("epoch_seconds BIGINT", "time_zone STRING"),
        returns="bigint",
        doc="Epoch seconds of the 1st of the month, 00:00, in `time_zone`.",
        template=f"unix_seconds(to_utc_timestamp(date_trunc('MONTH', {_LOCAL_S}), {{1}}))",
    )
)
UDFS.add(
    Rewrite(
        name="EndOfMonth",
        params=("epoch_seconds BIGINT", "time_zone STRING"),
        returns="bigint",
        doc="Epoch seconds of the month's last second (23:59:59) in `time_zone`.",
        template="unix_seconds(to_utc_timestamp(add_months(date_trunc('MONTH', "
        f"{_LOCAL_S}), 1), {{1}})) - 1",
    )
)
UDFS.add(
    Rewrite(
        name="TimestampFromUnix",
        params=("epoch_seconds BIGINT",),
        returns="timestamp",
        doc="Timestamp of `epoch_seconds` (Dagger takes the absolute value).",
        template="timestamp_seconds(abs(CAST({0} AS BIGINT)))",
    )
)
UDFS.add(
    Rewrite(
        name="FormatTimeInZone",
        params=("ts TIMESTAMP", "time_zone STRING", "format STRING"),
        returns="string",
        doc="`ts` formatted with a date pattern in `time_zone`.",
        template=_format_time,
    )
)
