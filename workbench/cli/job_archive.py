"""``workbench jobs archive|unarchive|delete JOB``: putting away jobs that do not run.

An archived job is hidden from ``jobs list`` (``--all`` shows it) and keeps everything;
a deleted one is gone from every read, its name free again, its rows and the ``delete``
event kept for the audit. Both refuse a job that runs: stop it first.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

_SAID = {"archive": "archived", "unarchive": "unarchived"}


def _client(args: argparse.Namespace):
    from workbench.client.rest import ServiceClient

    return ServiceClient(args.server, args.token)


def cmd_put_away(args: argparse.Namespace) -> int:
    job = getattr(_client(args), args.action)(args.job)
    print(
        f"{_SAID[args.action]} job {job['name']} (id {job['id']}, team {job['team']}): "
        f"status {job['status']}"
    )
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    job = _client(args).delete(args.job)
    print(f"deleted job {job['name']} (id {job['id']}, team {job['team']})")
    return 0


def add_actions(action: Callable[..., argparse.ArgumentParser]) -> None:
    """The actions, through ``jobs``'s own ``action(name, help, run)`` maker."""
    action(
        "archive", "hide a job that does not run from `jobs list` (--all shows it)", cmd_put_away
    ).set_defaults(action="archive")
    action("unarchive", "bring an archived job back (stopped)", cmd_put_away).set_defaults(
        action="unarchive"
    )
    q = action("delete", "remove a job that does not run; its name is free again", cmd_delete)
    q.description = (
        "Remove a job that does not run (stop it first): it is gone from every list and "
        "read and its name is free for a new job. Its versions, runs and events stay in "
        "the service's database (the audit trail records the delete); run folders and "
        "checkpoints on disk are left as they are."
    )
