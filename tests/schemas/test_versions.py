"""The published schema versions (:mod:`workbench.schemas.versions`): numbered from 1,
an unchanged set is not recorded twice, the hash ignores source info, unknown numbers
say which exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.exceptions import SchemaVersionError
from workbench.schemas import sets
from workbench.schemas.versions import SchemaVersions, content_hash

pytestmark = pytest.mark.unit

COMPAT = Path(__file__).resolve().parents[1] / "fixtures" / "schemas" / "compat"


def test_publishing_numbers_versions_and_skips_an_unchanged_set(tmp_path):
    store = SchemaVersions(tmp_path)
    old = sets.compiled(COMPAT / "compatible" / "old")
    first, new = store.publish(old, "old", note="first", author="alice")
    assert (first.number, new, first.author, first.note) == (1, True, "alice", "first")
    assert store.publish(old, "again") == (first, False)
    second, _ = store.publish(sets.compiled(COMPAT / "compatible" / "new"), "new")
    assert [v.number for v in store.list()] == [1, 2] and store.latest() == second
    assert store.files(1) == old  # kept with its source info (lines for `schemas check`)
    assert old.file[0].source_code_info.location


def test_the_hash_ignores_source_info(tmp_path):
    files = sets.compiled(COMPAT / "compatible" / "old")
    bare = type(files)()
    bare.CopyFrom(files)
    for proto in bare.file:
        proto.ClearField("source_code_info")
    assert content_hash(files) == content_hash(bare)


def test_an_unknown_version_names_the_published_ones(tmp_path):
    store = SchemaVersions(tmp_path)
    with pytest.raises(SchemaVersionError, match="none yet"):
        store.get(1)
    store.publish(sets.compiled(COMPAT / "compatible" / "old"), "old")
    with pytest.raises(SchemaVersionError, match=r"published: 1\)"):
        store.path(3)


def test_a_missing_descriptor_set_says_what_to_do(tmp_path):
    store = SchemaVersions(tmp_path)
    store.publish(sets.compiled(COMPAT / "compatible" / "old"), "old")
    (tmp_path / "v1.desc").unlink()
    with pytest.raises(SchemaVersionError, match="--schema-version"):
        store.path(1)
