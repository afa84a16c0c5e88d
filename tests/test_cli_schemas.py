"""``workbench schemas check | publish | versions`` (:mod:`workbench.cli.schemas`): exit 1
and one line per breaking change, 0 for a compatible change, ``--json``, registry versions
as ``@N``, ``@latest`` and ``@bundled``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli.main import main

pytestmark = pytest.mark.unit

COMPAT = Path(__file__).resolve().parent / "fixtures" / "schemas" / "compat"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))


def pair(case: str) -> list[str]:
    return [str(COMPAT / case / "old"), str(COMPAT / case / "new")]


def test_check_prints_each_breaking_change_and_exits_1(capsys):
    assert main(["schemas", "check", *pair("field_removed")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(str(COMPAT / "field_removed" / "new" / "shop.proto") + ":4: ")
    assert "field-removed" in lines[0] and "reserved 2;" in lines[0]
    assert lines[-1] == "1 breaking change(s)"


def test_a_compatible_change_exits_0_with_notes(capsys):
    assert main(["schemas", "check", *pair("compatible")]) == 0
    out = capsys.readouterr().out
    assert "note: " in out and out.splitlines()[-1] == "compatible: no breaking change"


def test_check_json(capsys):
    assert main(["schemas", "check", "--json", *pair("enum_value_reused")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["compatible"] is False
    [change] = report["breaking"]
    assert (change["kind"], change["line"]) == ("enum-value-number-reused", 7)


def test_publish_versions_and_check_registry_versions(capsys):
    old, new = pair("field_type_changed")
    assert main(["schemas", "publish", old, "--note", "first"]) == 0
    assert main(["schemas", "publish", old]) == 0
    out = capsys.readouterr().out
    assert "published schema version 1" in out and "unchanged: schema version 1" in out
    assert main(["schemas", "publish", new]) == 1  # breaks version 1: refused with the list
    assert "shop.proto:6: field-type-changed" in capsys.readouterr().err
    assert main(["schemas", "publish", new, "--allow-breaking"]) == 0
    assert "allowed breaking change: " in capsys.readouterr().out
    assert main(["schemas", "versions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["number"], r["note"], len(r["breaking"])) for r in rows] == [
        (1, "first", 0),
        (2, "", 1),
    ]
    assert rows[0]["messages"] == ["compat.Order"]
    assert main(["schemas", "check", "@1", "@latest"]) == 1
    assert "shop.proto:6: field-type-changed" in capsys.readouterr().out
    assert main(["schemas", "check", "@bundled", "@bundled"]) == 0


def test_an_unknown_version_is_an_error(capsys):
    assert main(["schemas", "check", "@1", "@2"]) == 1
    assert "no schema version 1" in capsys.readouterr().err


def test_show_lists_enum_values(capsys):
    """The text view names each enum field's values, as --json does: SQL compares an
    enum field with them (``status = 'COMPLETED'``)."""
    assert main(["schemas", "show", "BookingLogMessage"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "    4  status: esb.booking.BookingStatus (enum: BOOKING_STATUS_UNKNOWN, CREATED, "
        "DRIVER_FOUND, PICKED_UP, COMPLETED, CANCELLED)" in lines
    )
    assert "   13  amount: double" in lines  # other fields as before
