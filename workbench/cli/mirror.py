"""``workbench dev mirror up|down|status``: MirrorMaker 2 between two local Kafka clusters.

See :mod:`workbench.dev.mirror` (one dedicated MM2 process, identity replication policy,
state in ``$WORKBENCH_HOME/mirror``).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_up(args: argparse.Namespace) -> int:
    from workbench.dev.mirror import Mirror, Side

    mirror = Mirror(
        Side(args.source_alias, args.source),
        Side(args.target_alias, args.target),
        args.state_dir,
        topics=args.topics,
        groups=args.groups,
        replication=args.replication,
    )
    status = mirror.start()
    print(
        f"mirror running (pid {status.pid}): {args.source_alias} {args.source} -> "
        f"{args.target_alias} {args.target}, topics /{args.topics}/, groups /{args.groups}/; "
        f"log {status.log_file}"
    )
    return 0


def _existing(args: argparse.Namespace):
    from workbench.dev.mirror import Mirror

    return Mirror.existing(args.state_dir)


def cmd_down(args: argparse.Namespace) -> int:
    mirror = _existing(args)
    if mirror is not None:
        mirror.stop()
    print("mirror stopped")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    mirror = _existing(args)
    status = mirror.status() if mirror is not None else None
    if status is None or not status.running:
        print("mirror not running")
        return 3
    print(
        f"mirror running (pid {status.pid}): {status.source.alias} {status.source.bootstrap} "
        f"-> {status.target.alias} {status.target.bootstrap}; log {status.log_file}"
    )
    return 0


def add_dev_commands(dev: argparse._SubParsersAction) -> None:
    p = dev.add_parser(
        "mirror",
        help="MirrorMaker 2 from one local Kafka cluster into another",
        description="One dedicated MirrorMaker 2 process (org.apache.kafka:connect-mirror "
        "from Maven Central) copying topics and consumer-group offsets one way, SOURCE -> "
        "TARGET, topic names kept (identity replication policy). State in "
        "$WORKBENCH_HOME/mirror.",
    )
    actions = p.add_subparsers(dest="mirror_command", metavar="ACTION", required=True)
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument(
        "--state-dir", type=Path, default=None, help="config and log (default: .workbench/mirror)"
    )
    q = actions.add_parser(
        "up", help="start mirroring (waits for its first heartbeat)", parents=[state]
    )
    q.add_argument("--source", required=True, metavar="HOSTS", help="source bootstrap servers")
    q.add_argument("--target", required=True, metavar="HOSTS", help="target bootstrap servers")
    q.add_argument(
        "--source-alias",
        default="primary",
        help="the source's name in mm2.properties; MM2 writes the translated group offsets "
        "to ALIAS.checkpoints.internal on the target (default primary)",
    )
    q.add_argument("--target-alias", default="standby", help="the target's name (standby)")
    q.add_argument("--topics", default=".*", metavar="REGEX", help="topics to mirror (all)")
    q.add_argument(
        "--groups",
        default=".*",
        metavar="REGEX",
        help="consumer groups whose offsets MM2 translates (all; jobs commit as workbench-JOB)",
    )
    q.add_argument(
        "--replication", type=int, default=1, help="replicas of MM2's topics on the target"
    )
    q.set_defaults(run=cmd_up)
    q = actions.add_parser("down", help="stop mirroring", parents=[state])
    q.set_defaults(run=cmd_down)
    q = actions.add_parser("status", help="is it running? (exit 3 if not)", parents=[state])
    q.set_defaults(run=cmd_status)
