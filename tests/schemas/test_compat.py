"""The pure comparison (:mod:`workbench.schemas.compat`) over the fixture pairs in
tests/fixtures/schemas/compat: each breaking kind named at its file and line; a compatible
change (added field, message and enum value; a renamed field; a removed, reserved field)
passes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.schemas import compat, sets

pytestmark = pytest.mark.unit

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "schemas" / "compat"
EXPECTED = yaml.safe_load((CASES / "cases.yaml").read_text())


def check(case: str) -> list[compat.Change]:
    old, new = CASES / case / "old", CASES / case / "new"
    return compat.compare(sets.compiled(old), sets.compiled(new), (str(old), str(new)))


@pytest.mark.parametrize("case", sorted(k for k, v in EXPECTED.items() if v))
def test_each_breaking_kind_is_named_at_its_file_and_line(case):
    want = EXPECTED[case]
    found = compat.breaking(check(case))
    assert [(c.kind, c.file, c.line) for c in found] == [
        (want["kind"], str(CASES / case / want["file"]), want["line"])
    ], [c.render() for c in found]
    assert found[0].advice  # says what to do


def test_a_compatible_change_passes_with_notes():
    changes = check("compatible")
    assert compat.breaking(changes) == []
    kinds = sorted(c.kind for c in changes)
    assert kinds == [
        "enum-value-added",
        "field-added",
        "field-removed-reserved",
        "field-renamed",
        "message-added",
    ]


def test_reachable_follows_fields_into_messages_and_enums():
    side = compat.Side(sets.compiled(CASES / "compatible" / "new"))
    assert compat.reachable(side, ["compat.Order"]) >= {"compat.Order", "compat.Status"}
    assert "compat.Refund" not in compat.reachable(side, ["compat.Order"])


def test_an_unchanged_set_has_no_changes():
    files = sets.compiled(CASES / "field_removed" / "old")
    assert compat.compare(files, files) == []


def test_a_type_change_inside_a_map_is_breaking():
    old = sets.compiled(CASES / "compatible" / "old")
    new = sets.compiled(CASES / "compatible" / "old")
    order = next(m for m in new.file[-1].message_type if m.name == "Order")
    entry = order.nested_type[0]
    entry.field[1].type = entry.field[1].TYPE_INT64
    kinds = [c.kind for c in compat.breaking(compat.compare(old, new))]
    assert kinds == ["field-type-changed"]
