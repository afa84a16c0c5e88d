"""The chaos and load commands: ``load`` (drive a topic at a rate, watch a dagger keep up)
and ``chaos run`` (a scenario file's faults under load, with a report)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from workbench.cli.jobs import _connection


def cmd_load(args: argparse.Namespace) -> int:
    from workbench.chaos.load import LoadPlan, drive

    plan = LoadPlan(
        args.topic, args.message, args.rate, args.duration, args.seed, args.partitions,
        args.malformed,
    )  # fmt: skip
    metrics = None
    if args.job:
        from workbench.client.rest import ServiceClient

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
        + (f", {result.malformed:,} of them malformed" if result.malformed else "")
    )
    if result.sustained is not None:
        print(
            f"job {args.job} decoded {result.sustained:,.1f} records/s over the run; "
            f"{result.lag:,} offsets behind at the end"
        )
    return 0


def cmd_chaos_run(args: argparse.Namespace) -> int:
    from workbench.chaos.env import ChaosEnv, brokers_in
    from workbench.chaos.faults import FAULTS
    from workbench.chaos.runner import run_scenario
    from workbench.chaos.scenario import load_scenario
    from workbench.paths import subdir

    scenario = load_scenario(args.scenario)
    brokers = brokers_in(args.kafka_dir or subdir("kafka"))
    # where clients connect: the advertised addresses (a fault proxy's, if any)
    bootstrap = args.bootstrap_servers or ",".join(
        f"{b.bootstrap.rpartition(':')[0]}:{b.advertised_port}" for b in brokers
    )
    env = ChaosEnv(bootstrap, brokers, job=args.job or scenario.job)
    if env.job:
        from workbench.client.rest import ServiceClient

        env.client = ServiceClient(args.server, args.token)
        env.client.get_job(env.job)
    needs = {part for case in scenario.cases for part in FAULTS.get(case.fault).needs}
    proxy = _proxy(brokers) if "proxy" in needs else None
    env.proxy = proxy
    try:
        result = run_scenario(scenario, env)
    finally:
        if proxy is not None:
            proxy.stop()
    from workbench.chaos.report import write_report

    folder = args.report or subdir("chaos") / "reports" / f"{scenario.name}-{_stamp()}"
    page = write_report(result, folder)
    for run in result["runs"]:
        load = run["load"] or {}
        what = "control" if run["control"] else f"{run['fault']} {run['params'] or ''}".strip()
        recovery = run["recovery_s"]
        print(
            f"{run['case']} ({what}): sent {load.get('sent', 0):,} at "
            f"{load.get('achieved_rate', 0):,.1f}/s; "
            + (f"recovered in {recovery:.1f}s" if run["recovered"] else "did NOT recover")
            + f"; {run['verdict']}"
        )
    for ledger in result.get("ledgers", []):
        print(f"ledger of {ledger['sink']}: {ledger['verdict']}")
    print(f"report: {page} (and report.json)")
    return 0 if result["passed"] else 1


def _proxy(brokers):
    """The fault proxy on the advertised port of the first broker that advertises another
    port than it listens on: the standing one (`workbench chaos proxy`) if it runs, else
    one for this run."""
    from workbench.chaos.proxy import FaultProxy
    from workbench.chaos.standing_proxy import standing
    from workbench.dev.ports import HOST

    broker = _proxied(brokers)
    return (
        standing(broker.state_dir)
        or FaultProxy((HOST, broker.port), port=broker.advertised_port).start()
    )


def _proxied(brokers):
    from workbench.exceptions import ChaosError

    for broker in brokers:
        if broker.advertised_port != broker.port:
            return broker
    raise ChaosError(
        "Network faults need a broker that advertises a fault proxy's port: start it with "
        "`workbench dev kafka up --advertised-port P` (see docs/chaos.md)."
    )


def cmd_chaos_proxy(args: argparse.Namespace) -> int:
    import signal
    import threading

    from workbench.chaos.env import brokers_in
    from workbench.chaos.standing_proxy import serve
    from workbench.paths import subdir

    broker = _proxied(brokers_in(args.kafka_dir or subdir("kafka")))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"fault proxy on 127.0.0.1:{broker.advertised_port} -> 127.0.0.1:{broker.port} "
        "(chaos runs switch its faults; Ctrl-C to stop)",
        flush=True,
    )
    serve(broker.state_dir, broker.port, broker.advertised_port, stop)
    return 0


def create_through_proxy(args: argparse.Namespace, bootstrap: str) -> None:
    """``dev kafka up --advertised-port --topic``: create the topics through the proxy on the
    advertised port (one for the moment when none runs there)."""
    from workbench.chaos.proxy import FaultProxy
    from workbench.dev.ports import HOST, port_taken
    from workbench.kafka.admin import create_topics

    if not args.topic:
        return
    port = int(bootstrap.rpartition(":")[2])
    topics = {t: args.partitions for t in args.topic}
    if port_taken(args.advertised_port):  # a standing proxy serves it
        create_topics(bootstrap, topics)
    else:
        with FaultProxy((HOST, port), port=args.advertised_port):
            create_topics(bootstrap, topics)
    print(f"topics ready: {', '.join(args.topic)} ({args.partitions} partitions)")


def _stamp() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


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
    p.add_argument(
        "--malformed",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="this fraction of records undecodable (seeded; Kafka timestamp = event time)",
    )
    p.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    p.add_argument("--job", metavar="JOB", help="a job (id or name) to watch in the job service")
    p.add_argument("--json", action="store_true", help="the result as JSON")
    _connection(p, None)
    p.set_defaults(run=cmd_load)

    p = sub.add_parser("chaos", help="chaos scenarios: faults under load, with a report")
    chaos = p.add_subparsers(dest="chaos_command", required=True)
    q = chaos.add_parser(
        "run",
        help="run a scenario file",
        description="Replay the revert journal, run the scenario's control run and cases "
        "(each fault applied under its load and reverted, also on Ctrl-C or SIGTERM), "
        "probe the broker and the job, and write the report. Exit 1 when a run did not "
        "recover or its load failed.",
    )
    q.add_argument("scenario", type=Path, metavar="SCENARIO.yaml")
    q.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="default: $WORKBENCH_HOME/chaos/reports/NAME-T",
    )
    q.add_argument(
        "--kafka-dir",
        type=Path,
        metavar="DIR",
        help="brokers' state (.workbench/kafka)",
    )
    q.add_argument("--bootstrap-servers", help="default: the brokers' advertised addresses")
    q.add_argument("--job", metavar="JOB", help="the dagger under test (default: the scenario's)")
    _connection(q, None)
    q.set_defaults(run=cmd_chaos_run)
    q = chaos.add_parser(
        "proxy",
        help="serve the broker's advertised port through a standing fault proxy",
        description="Forward the advertised port of the broker in --kafka-dir (started with "
        "`workbench dev kafka up --advertised-port P`) to its real port until Ctrl-C, so "
        "daggers connect through it before and after chaos runs; `chaos run` switches its "
        "faults (through a control file next to the broker's state).",
    )
    q.add_argument(
        "--kafka-dir", type=Path, metavar="DIR", help="the broker's state (.workbench/kafka)"
    )
    q.set_defaults(run=cmd_chaos_proxy)
