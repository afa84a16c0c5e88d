"""The chaos and load commands: ``load`` (drive a topic at a rate, watch a dagger keep up)."""

from __future__ import annotations

import argparse
import json

from workbench.cli_jobs import _connection


def cmd_load(args: argparse.Namespace) -> int:
    from workbench.chaos.load import LoadPlan, drive

    plan = LoadPlan(args.topic, args.message, args.rate, args.duration, args.seed, args.partitions)
    metrics = None
    if args.job:
        from workbench.server.client import ServiceClient

        client = ServiceClient(args.server, args.token)
        client.get_job(args.job)  # a wrong reference fails before any event is sent

        def metrics() -> dict:
            return client.get_job(args.job).get("metrics") or {}

    if not args.json:
        print(f"loading {plan.topic} with {plan.count:,} {plan.message} at {plan.rate:g}/s")
    result = drive(args.bootstrap_servers, plan, job_metrics=metrics, job=args.job)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return 0
    print(
        f"sent {result.sent:,} events in {result.seconds:.1f}s: {result.achieved_rate:,.1f}/s "
        f"({result.achieved_rate / plan.rate:.0%} of the target)"
    )
    if result.sustained is not None:
        print(
            f"job {args.job} decoded {result.sustained:,.1f} records/s over the run; "
            f"{result.lag:,} offsets behind at the end"
        )
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "load",
        help="drive a topic at a target rate and report what a dagger sustained",
        description="Publish RATE × DURATION seeded generator events of one message to a "
        "topic, paced to the wall clock; report the rate achieved and, with --job, the "
        "records per second the job decoded meanwhile and its lag at the end.",
    )
    p.add_argument("--topic", required=True)
    p.add_argument(
        "--message", required=True, help="event kind (bookings...) or its protobuf message name"
    )
    p.add_argument("--rate", type=float, required=True, help="events per second")
    p.add_argument("--duration", type=float, required=True, metavar="SECONDS")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--partitions", type=int, default=3, help="partitions if the topic is new")
    p.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    p.add_argument("--job", metavar="JOB", help="a job (id or name) to watch in the job service")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    _connection(p, None)
    p.set_defaults(run=cmd_load)
