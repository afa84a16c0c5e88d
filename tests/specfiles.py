"""Spec files the validate tests write: two streams of bookings, ``s0`` and ``s1``."""

from __future__ import annotations


def spec_file(tmp_path, sql: str, sinks: list | None = None, **extra) -> str:
    import yaml

    stream = {"message": "esb.booking.BookingLogMessage", "topics": ["bookings"]}
    spec = {
        "name": "checked",
        "streams": [{"table": "s0", **stream}, {"table": "s1", **stream}],
        "sql": sql,
        "sinks": sinks or [{"type": "log"}],
        **extra,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path)
