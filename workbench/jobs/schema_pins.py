"""Which schema version a job version decodes with, and the check before it changes.

A job version is pinned to a published schema version (:mod:`workbench.schemas.versions`;
``Version.schema_version``, None for the bundled schemas). A submit or promotion pins the
version asked for, else the latest published one; an edit, a rollback or a failover keeps
the pin unless the edit asks for another (``schema_version``). Before a pin changes,
:func:`check` compares the two sets for the messages the job's streams read (and every
message and enum those reach) and refuses a breaking change with the list
(:class:`~workbench.exceptions.SchemaBreakingError`). Every new version's spec is checked
against its pinned set (:func:`check_names`: messages, event-time fields, the SQL's
names), so a version never pins a set it cannot run on. Runs get the pinned set's file in
``run.json`` (``schema_set``) and decode with it (:func:`registry_for_run`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.exceptions import (
    SchemaBreakingError,
    SchemaError,
    SchemaMismatchError,
    SchemaVersionError,
    SpecError,
    SqlError,
    UnknownNameError,
)
from workbench.kinds import KINDS
from workbench.schemas import SchemaRegistry
from workbench.schemas.versions import SchemaVersions

if TYPE_CHECKING:
    from workbench.schemas.registry import SchemaRegistry
    from workbench.spec import DaggerSpec


def for_submit(store: SchemaVersions, requested: int | None) -> int | None:
    """The pin of a submitted or promoted version: the one asked for, else the latest."""
    if requested is not None:
        store.get(requested)  # a SchemaVersionError naming the published ones
        return requested
    latest = store.latest()
    return latest.number if latest else None


def check(
    store: SchemaVersions, job: str, spec: DaggerSpec, pinned: int | None, wanted: int | None
) -> None:
    """Refuse (SchemaBreakingError) moving ``job`` from ``pinned`` to ``wanted`` when that
    breaks a message its streams read; nothing to check when the pin does not change."""
    if pinned == wanted:
        return
    from workbench.schemas import compat, sets

    old, new = (sets.load(_ref(n), store)[0] for n in (pinned, wanted))
    side = compat.Side(old)
    roots = _stream_messages(spec, registry(store, pinned, spec))
    used = compat.reachable(side, roots)
    bad = [c for c in compat.breaking(compat.compare(old, new)) if c.owner in used]
    if bad:
        raise SchemaBreakingError(job, pinned, wanted, bad)


def check_names(
    store: SchemaVersions,
    job: str,
    spec: DaggerSpec,
    pinned: int | None,
    today: int | None | bool = False,
) -> None:
    """Refuse (SchemaMismatchError) a spec whose messages, event-time fields or SQL names
    schema version ``pinned`` (None: bundled) lacks: what its runs would fail on.
    ``today``: the version the job runs on now (False: none, a new job), whose fields the
    SQL may name (:mod:`workbench.schemas.fit`)."""

    moving = today is not False and today != pinned
    before = registry(store, today, spec) if moving else None  # type: ignore[arg-type]
    try:
        KINDS.check_names(spec, registry(store, pinned, spec), before)
    except SchemaVersionError:
        raise
    except (SpecError, SqlError, SchemaError) as err:
        raise SchemaMismatchError(job, pinned, err) from None


def set_path(store: SchemaVersions, pinned: int | None) -> str | None:
    """The descriptor set file a run of a version pinned to ``pinned`` decodes with."""
    return None if pinned is None else str(store.path(pinned))


def registry(store: SchemaVersions, pinned: int | None, spec: DaggerSpec) -> SchemaRegistry:
    return registry_for_run(set_path(store, pinned), spec)


def registry_for_run(schema_set: str | None, spec: DaggerSpec) -> SchemaRegistry:
    """The registry a run decodes with: its pinned set plus the spec's own ``schemas``
    (no pin: the bundled schemas, as for any spec)."""
    from workbench.streams import registry_for

    if schema_set is None:
        return registry_for(spec)
    return SchemaRegistry(Path(schema_set), *spec.schemas)


def _ref(pinned: int | None) -> str:
    return "@bundled" if pinned is None else f"@{pinned}"


def _stream_messages(spec: DaggerSpec, registry: SchemaRegistry) -> list[str]:
    """Full names of the messages the spec's streams read (ones the pinned set does not
    know are left out: the spec's validation names them)."""
    found = []
    for stream in spec.streams:
        try:
            found.append(registry.resolve(stream.message))
        except UnknownNameError:
            continue
    return found
