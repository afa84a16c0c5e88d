"""Times as a city head reads them: on the city's clock (``12:05 WIB``), with UTC on hover."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from zoneinfo import ZoneInfo


def zone_name(zone: ZoneInfo, at: datetime) -> str:
    """``WIB`` (the zone's abbreviation), or ``UTC+7`` when it has only a number."""
    local = at.astimezone(zone)
    abbreviation = local.strftime("%Z")
    return abbreviation if abbreviation[:1].isalpha() else offset(zone, at)


def offset(zone: ZoneInfo, at: datetime) -> str:
    """``UTC+7``, ``UTC+5:30``, ``UTC``."""
    delta = at.astimezone(zone).utcoffset()
    minutes = int(delta.total_seconds() // 60) if delta else 0
    if minutes == 0:
        return "UTC"
    sign, minutes = ("+" if minutes > 0 else "-"), abs(minutes)
    return f"UTC{sign}{minutes // 60}" + (f":{minutes % 60:02d}" if minutes % 60 else "")


def zone_label(zone: ZoneInfo, at: datetime) -> str:
    """``WIB, UTC+7``: what an axis or a footer says the times are in."""
    name, shift = zone_name(zone, at), offset(zone, at)
    return name if name == shift else f"{name}, {shift}"


def local(at: datetime, zone: ZoneInfo, pattern: str = "%H:%M") -> str:
    return at.astimezone(zone).strftime(pattern)


def utc(at: datetime, pattern: str = "%Y-%m-%d %H:%M") -> str:
    return f"{at.astimezone(UTC).strftime(pattern)} UTC"


def time_html(at: datetime, zone: ZoneInfo, pattern: str = "%H:%M") -> str:
    """``<time title="2026-12-07 05:05 UTC">12:05 WIB</time>``."""
    shown = f"{local(at, zone, pattern)} {zone_name(zone, at)}"
    stamp = at.astimezone(UTC).isoformat()
    return (
        f'<time datetime="{stamp}" title="{html.escape(utc(at, "%Y-%m-%d " + pattern))}">'
        f"{html.escape(shown)}</time>"
    )
