"""``workbench schemas check | publish | versions``: schema safety on the command line.

``check OLD NEW`` lists the breaking changes between two schema sets (folders, descriptor
sets or registry versions, :mod:`workbench.schemas.sets`), one a line as
``file:line: kind: what; what to do``, and exits 1 when there is one. ``publish`` records a
version in the registry (:mod:`workbench.schemas.publishing`: refused when it breaks the
latest unless ``--allow-breaking``), ``versions`` lists them; both talk to the job service
when one is configured (``--server``, ``$WORKBENCH_SERVER``), else to the local store.
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
    from workbench.schemas import sets

    files, _ = sets.load(args.source)
    if _remote(args):
        found = _client(args).publish_schemas(
            files.SerializeToString(deterministic=True), args.source, args.note or "",
            args.allow_breaking,
        )  # fmt: skip
    else:
        from workbench.schemas import publishing
        from workbench.schemas.versions import SchemaVersions

        record, new = publishing.publish(
            SchemaVersions(), files, args.source, args.note or "", None, args.allow_breaking
        )
        found = {**record.to_dict(), "new": new}
    if args.json:
        print(json.dumps(found))
    elif not found["new"]:
        print(f"unchanged: schema version {found['number']} already holds this set")
    else:
        print(f"published schema version {found['number']} ({found['sha256'][:12]})")
        for line in found.get("breaking") or []:
            print(f"allowed breaking change: {line}")
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    if _remote(args):
        found = _client(args).schema_versions()
    else:
        from workbench.schemas import publishing
        from workbench.schemas.versions import SchemaVersions

        found = publishing.listing(SchemaVersions())
    if args.json:
        print(json.dumps(found))
        return 0
    print(f"{'VERSION':<8} {'SHA256':<13} {'CREATED':<21} {'AUTHOR':<12} {'MESSAGES':<9} NOTE")
    print(
        f"{'bundled':<8} {'-':<13} {'-':<21} {'-':<12} {'-':<9} shipped schemas + "
        "$WORKBENCH_SCHEMAS"
    )
    for v in found:
        note = v["note"] + (" (breaking allowed)" if v.get("breaking") else "")
        print(
            f"{v['number']:<8} {v['sha256'][:12]:<13} {v['created_at']:<21} "
            f"{v['author']:<12} {len(v['messages']):<9} {note}"
        )
    return 0


def _remote(args: argparse.Namespace) -> bool:
    """Whether a job service is configured (``--server`` or ``$WORKBENCH_SERVER``)."""
    from workbench.settings import settings

    return bool(args.server or settings().server)


def _client(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from workbench.cli.jobs import _client as service_client

    return service_client(args)


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
    from workbench.cli.jobs import _connection

    q = schemas.add_parser(
        "publish",
        help="record a schema set as the next registry version",
        description="Checked against the latest version: a breaking change refuses it "
        "(listed) unless --allow-breaking. To the job service at --server "
        "($WORKBENCH_SERVER) when one is given, else to $WORKBENCH_HOME/schema-versions.",
    )
    q.add_argument("source", help="a folder of .proto files or a .desc/.pb descriptor set")
    q.add_argument("--note", help="what changed (kept with the version)")
    q.add_argument(
        "--allow-breaking",
        action="store_true",
        help="publish even if it breaks the latest version (kept in the version's record; "
        "an admin on a job service)",
    )
    q.add_argument("--json", action="store_true", help="print the version as JSON")
    _connection(q, None)
    q.set_defaults(run=cmd_publish)
    q = schemas.add_parser(
        "versions",
        help="list the published schema versions",
        description="From the job service at --server ($WORKBENCH_SERVER) when one is "
        "given, else from $WORKBENCH_HOME/schema-versions.",
    )
    q.add_argument("--json", action="store_true", help="print them as JSON")
    _connection(q, None)
    q.set_defaults(run=cmd_versions)
