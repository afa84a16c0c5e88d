"""``workbench service reload``: the running job service reads ``service.yaml`` again (its
Spark clusters, teams and tokens) without a restart, as ``kill -HUP`` of ``workbench serve``
does (:mod:`workbench.service.reload`). Admins only."""

from __future__ import annotations

import argparse


def cmd_reload(args: argparse.Namespace) -> int:
    from workbench.client.rest import ServiceClient
    from workbench.service.reload import summary

    print(summary(ServiceClient(args.server, args.token).reload_config()))
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "service",
        help="the job service itself: reload its config",
        description="Act on the job service at --server (or $WORKBENCH_SERVER), else the "
        "local one.",
    )
    actions = p.add_subparsers(dest="service_command", metavar="ACTION", required=True)
    q = actions.add_parser(
        "reload",
        help="read service.yaml again: clusters, teams, tokens (as SIGHUP does)",
        description="The running service reads its service.yaml again and applies its "
        "clusters, teams file and API tokens; other keys that changed are listed as "
        "needing a restart. A file that does not load changes nothing (exit 1, the error "
        "names the key). Admins only.",
    )
    q.add_argument("--server", metavar="URL", help="job service URL ($WORKBENCH_SERVER)")
    q.add_argument("--token", metavar="T", help="API token ($WORKBENCH_TOKEN)")
    q.set_defaults(run=cmd_reload)
