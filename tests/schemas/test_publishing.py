"""Publishing with the compatibility check (:mod:`workbench.schemas.publishing`): the first
version is compared with nothing, a breaking one is refused with the list unless allowed
(then kept in its record), a listing names each version's messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.exceptions import SchemaPublishError
from workbench.schemas import publishing, sets
from workbench.schemas.versions import SchemaVersions

pytestmark = pytest.mark.unit

COMPAT = Path(__file__).resolve().parents[1] / "fixtures" / "schemas" / "compat"


def test_breaking_is_refused_unless_allowed_and_then_recorded(tmp_path):
    store = SchemaVersions(tmp_path)
    old, new = (sets.compiled(COMPAT / "message_removed" / side) for side in ("old", "new"))
    first, _ = publishing.publish(store, new, "new", author="alice")  # nothing to compare
    assert first.breaking == []
    publishing.publish(store, old, "old")  # a message added: compatible
    with pytest.raises(SchemaPublishError, match="breaks schema version 2") as refused:
        publishing.publish(store, new, "new")
    [change] = refused.value.changes
    assert change.kind == "message-removed" and refused.value.details()["changes"]
    third, created = publishing.publish(store, new, "new", allow_breaking=True)
    assert created and "message-removed" in third.breaking[0]
    listed = publishing.listing(store)
    assert [v["messages"] for v in listed] == [
        ["compat.Order"],
        ["compat.Order", "compat.Refund"],
        ["compat.Order"],
    ]
