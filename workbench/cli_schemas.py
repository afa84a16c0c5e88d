"""``workbench schemas check | publish | versions``: schema safety on the command line.

``check OLD NEW`` lists the breaking changes between two schema sets (folders, descriptor
sets or registry versions, :mod:`workbench.schemas.sets`), one a line as
``file:line: kind: what; what to do``, and exits 1 when there is one. ``publish`` records a
version in the registry (:mod:`workbench.schemas.versions`), ``versions`` lists them.
"""

from __future__ import annotations

import argparse
import json


def cmd_check(args: argparse.Namespace) -> int:
    from workbench.schemas import compat, sets

    old, old_root = sets.load(args.old)
    new, new_root = sets.load(args.new)
    changes = compat.compare(old, new, (old_root, new_root))
    bad = compat.breaking(changes)
    if args.json:
        notes = [c.to_dict() for c in changes if not c.breaking]
        report = {"old": args.old, "new": args.new, "compatible": not bad}
        print(json.dumps({**report, "breaking": [c.to_dict() for c in bad], "notes": notes}))
        return 1 if bad else 0
    for change in changes:
        print(change.render() if change.breaking else f"note: {change.render()}")
    print(f"{len(bad)} breaking change(s)" if bad else "compatible: no breaking change")
    return 1 if bad else 0


def cmd_publish(args: argparse.Namespace) -> int:
    from workbench.schemas import compat, sets
    from workbench.schemas.versions import SchemaVersions

    store = SchemaVersions()
    files, _ = sets.load(args.source, store)
    before = store.latest()
    record, new = store.publish(files, args.source, note=args.note or "")
    if args.json:
        print(json.dumps({**record.to_dict(), "new": new}))
        return 0
    if not new:
        print(f"unchanged: schema version {record.number} already holds this set")
        return 0
    print(f"published schema version {record.number} ({record.sha256[:12]})")
    previous = sets.load(f"@{before.number}" if before else "@bundled", store)[0]
    bad = compat.breaking(compat.compare(previous, files))
    if bad:
        was = before.number if before else "bundled"
        print(
            f"warning: {len(bad)} breaking change(s) from version {was} (see `workbench "
            f"schemas check @{was} @{record.number}`); jobs pinned to {was} stay on it"
        )
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    from workbench.schemas.versions import SchemaVersions

    found = SchemaVersions().list()
    if args.json:
        print(json.dumps([v.to_dict() for v in found]))
        return 0
    print(f"{'VERSION':<8} {'SHA256':<13} {'CREATED':<21} {'AUTHOR':<12} NOTE")
    print(f"{'bundled':<8} {'-':<13} {'-':<21} {'-':<12} shipped schemas + $WORKBENCH_SCHEMAS")
    for v in found:
        print(f"{v.number:<8} {v.sha256[:12]:<13} {v.created_at:<21} {v.author:<12} {v.note}")
    return 0


def add_actions(schemas: argparse._SubParsersAction) -> None:
    """The actions ``check``, ``publish`` and ``versions`` of the ``schemas`` group."""
    q = schemas.add_parser(
        "check",
        help="list breaking changes between two schema sets (exit 1 if any)",
        description="OLD and NEW: a folder of .proto files, a .desc/.pb descriptor set, or "
        "a registry version (@N, @latest, @bundled).",
    )
    q.add_argument("old", help="the schema set jobs read today")
    q.add_argument("new", help="the schema set to check against it")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.set_defaults(run=cmd_check)
    q = schemas.add_parser("publish", help="record a schema set as the next registry version")
    q.add_argument("source", help="a folder of .proto files or a .desc/.pb descriptor set")
    q.add_argument("--note", help="what changed (kept with the version)")
    q.add_argument("--json", action="store_true", help="print the version as JSON")
    q.set_defaults(run=cmd_publish)
    q = schemas.add_parser("versions", help="list the published schema versions")
    q.add_argument("--json", action="store_true", help="print them as JSON")
    q.set_defaults(run=cmd_versions)
