"""The streaming commands: ``run``, ``generate`` and ``dev kafka up|down|status``."""

from __future__ import annotations

import argparse
import contextlib
import sys
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from workbench.cli import clusters as cli_clusters
from workbench.exceptions import WorkbenchError


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.kinds import KINDS
    from workbench.settings import set_default, variable
    from workbench.streaming.job import with_bootstrap

    # Spark's own ERROR lines repeat the failure as pages of JVM trace: only with --verbose.
    set_default(variable("spark_log_level"), "WARN" if args.verbose else "OFF")
    spec = KINDS.load(args.spec)  # a dagger, or a quality job (kind: quality)
    if args.bootstrap_servers:
        spec = with_bootstrap(spec, args.bootstrap_servers)  # type: ignore[arg-type]
    job = KINDS.job_class(spec)(
        spec,  # type: ignore[arg-type]
        checkpoint=args.checkpoint,
        available_now=args.available_now,
    )
    with _one_paragraph(job, args.verbose):
        job.start()
        kind = getattr(spec, "kind", "dagger")
        print(f"{kind} '{spec.name}' running: checkpoint {job.checkpoint}; {job.outputs()}")
        print("stop with Ctrl-C (or SIGTERM): the current micro-batch finishes first")
        totals = job.run(duration_s=args.duration)
    print(
        f"stopped: {totals.records_read:,} records read, {totals.late_rows:,} late, "
        f"{totals.dead_letters:,} dead letters; rows written: {totals.written_summary()}"
    )
    warning = job.nothing_read()
    if warning:
        print(warning, file=sys.stderr)
    return 0


@contextlib.contextmanager
def _one_paragraph(job, verbose: bool) -> Iterator[None]:
    """Spark and py4j errors of a run as one paragraph (``--verbose``: with the trace)."""
    from workbench.runtime.spark_errors import summary, text_of
    from workbench.streaming.job import JobFailedError

    try:
        yield
    except JobFailedError as err:
        raise _paragraph(job, str(err), err.detail, verbose) from None
    except WorkbenchError:
        raise  # already one clear line
    except Exception as err:  # noqa: BLE001 - py4j / pyspark errors at start
        trace = "".join(traceback.format_exception(err))
        raise _paragraph(job, summary(text_of(err)), trace, verbose) from None


def _paragraph(job, text: str, detail: str, verbose: bool) -> WorkbenchError:
    if verbose:
        print(detail, file=sys.stderr)
    hint = "" if verbose else " Run with --verbose for Spark's trace."
    if job.resumed:
        hint = (
            " If the checkpoint holds an earlier version of this query, run with "
            f"--checkpoint NEW_DIR.{hint}"
        )
    return WorkbenchError(
        f"dagger '{job.spec.name}' (checkpoint {job.checkpoint}) stopped: {text.rstrip('.')}.{hint}"
    )


def cmd_generate(args: argparse.Namespace) -> int:
    from workbench.dev.generator import Generator
    from workbench.dev.producer import TOPICS, publish
    from workbench.kafka.admin import create_topics

    topic = args.topic or TOPICS[args.kind]
    create_topics(args.bootstrap_servers, {topic: args.partitions})
    start = datetime.fromisoformat(args.start) if args.start else datetime.now(UTC)
    generator = Generator(
        seed=args.seed,
        start=start if start.tzinfo else start.replace(tzinfo=UTC),
        rate_per_s=args.rate,
        late_fraction=args.late_fraction,
        out_of_order_seconds=args.out_of_order,
        malformed_fraction=args.malformed_fraction,
    )
    print(f"publishing {args.kind} to {topic} at {args.bootstrap_servers} ({args.rate:g}/s)")

    def progress(out) -> None:
        if out.sent % 10_000 < 500:
            print(f"  {out.sent:,} sent ({out.malformed:,} malformed)", flush=True)

    out = publish(
        args.bootstrap_servers,
        args.kind,
        topic=topic,
        count=args.count,
        duration_s=args.duration if args.count is None else None,
        generator=generator,
        speedup=None if args.as_fast_as_possible else args.speedup,
        on_progress=progress,
    )
    print(f"sent {out.sent:,} events to {topic} ({out.malformed:,} malformed)")
    return 0


def _broker(args: argparse.Namespace):
    from workbench.dev.kafka import Broker

    advertised = getattr(args, "advertised_port", None)
    return Broker(
        args.state_dir, port=args.port, controller_port=args.port + 1, advertised_port=advertised
    )


def _cluster(args: argparse.Namespace):
    """The multi-broker cluster whose layout the state folder holds (None: there is none)."""
    from workbench.dev.broker_cluster import BrokerCluster
    from workbench.paths import subdir

    return BrokerCluster.existing(args.state_dir or subdir("kafka"))


def cmd_kafka_up(args: argparse.Namespace) -> int:
    from workbench.kafka.admin import create_topics

    if args.advertised_port and args.brokers > 1:
        from workbench.exceptions import SetupError

        raise SetupError("--advertised-port is for one broker: drop --brokers or the port.")
    if args.brokers > 1:
        from workbench.dev.broker_cluster import BrokerCluster
        from workbench.paths import subdir

        cluster = BrokerCluster.on_ports(args.state_dir or subdir("kafka"), args.brokers, args.port)
        cluster.start()
        bootstrap = cluster.bootstrap
        print(f"kafka cluster {cluster.cluster_id} running: {args.brokers} brokers at {bootstrap}")
    else:
        status = _broker(args).start()
        bootstrap = status.bootstrap
        print(f"kafka running at {bootstrap} (pid {status.pid}, data in {status.state_dir})")
    if args.advertised_port:
        from workbench.cli.chaos import create_through_proxy

        print(
            f"it advertises 127.0.0.1:{args.advertised_port}: clients reach it through a fault "
            "proxy there (`workbench chaos proxy`; see docs/chaos.md)"
        )
        create_through_proxy(args, bootstrap)
        return 0
    if args.topic:
        replication = args.replication or min(3, args.brokers)
        create_topics(bootstrap, {t: args.partitions for t in args.topic}, replication=replication)
        copies = f", replication {replication}" if replication > 1 else ""
        print(f"topics ready: {', '.join(args.topic)} ({args.partitions} partitions){copies}")
    return 0


def cmd_kafka_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    if cluster is not None:
        cluster.stop()
    _broker(args).stop()
    print("kafka stopped")
    return 0


def cmd_kafka_status(args: argparse.Namespace) -> int:
    """The broker, or each node of the cluster the state folder holds: exit 0 when every
    configured node answers, 1 when some do not (each named), 3 when none runs."""
    cluster = _cluster(args)
    if cluster is not None:
        return _cluster_status(cluster)
    status = _broker(args).status()
    if status.running:
        print(f"kafka running at {status.bootstrap} (pid {status.pid}), log {status.log_file}")
        return 0
    print(f"kafka not running (state in {status.state_dir})")
    return 3


def _cluster_status(cluster) -> int:
    answers = cluster.answering()
    configured = len(cluster.brokers)
    print(f"kafka cluster {cluster.cluster_id}: {sum(answers)} of {configured} brokers answer")
    for node, (broker, answered) in enumerate(zip(cluster.brokers, answers, strict=True), 1):
        status = broker.status()
        if answered:
            print(f"kafka running at {status.bootstrap} (pid {status.pid}), log {status.log_file}")
        else:
            why = f"pid {status.pid} runs but does not answer" if status.running else "not running"
            print(f"kafka node {node} at {status.bootstrap} is down ({why}), log {status.log_file}")
    if not any(b.status().running for b in cluster.brokers):
        return 3
    return 0 if all(answers) else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    from workbench.dev.producer import TOPICS

    p = sub.add_parser(
        "run",
        help="run a dagger as a checkpointed streaming job on Kafka",
        description="Read the spec's Kafka streams, run its SQL in event time and write "
        "every sink. Ctrl-C or SIGTERM stops after the current micro-batch; a restart "
        "continues from the checkpoint without losing or doubling a window.",
    )
    p.add_argument("spec", help="a dagger spec (YAML)")
    p.add_argument(
        "--checkpoint",
        help="checkpoint folder (default: the spec's, else .workbench/checkpoints/<name>)",
    )
    p.add_argument("--bootstrap-servers", help="override every Kafka address in the spec")
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop after this long (default: run until stopped)",
    )
    p.add_argument(
        "--available-now",
        action="store_true",
        help="process what the topics hold now, then stop (backfill)",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="on an error, print Spark's full trace and log (default: one paragraph)",
    )
    p.set_defaults(run=cmd_run)

    p = sub.add_parser(
        "generate",
        help="publish demo events to Kafka",
        description="Bookings, driver pings, payments or API logs around Jakarta's "
        "hotspots, with out-of-order, late and malformed events as asked.",
    )
    p.add_argument("kind", choices=sorted(TOPICS), help="event kind")
    p.add_argument("--bootstrap-servers", default="127.0.0.1:9092")
    p.add_argument(
        "--topic", help="topic (default: booking-log, driver-location, payment-log or api-log)"
    )
    p.add_argument("--partitions", type=int, default=3, help="partitions if the topic is new")
    p.add_argument("--rate", type=float, default=500.0, help="events per event-time second")
    p.add_argument(
        "--count", type=int, default=None, help="events to send (default: run for --duration)"
    )
    p.add_argument(
        "--duration",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="wall seconds to publish for (default 60)",
    )
    p.add_argument(
        "--speedup",
        type=float,
        default=1.0,
        help="event-time seconds per wall second (default 1: real time)",
    )
    p.add_argument("--as-fast-as-possible", action="store_true", help="no pacing")
    p.add_argument("--start", help="event time of the first event (ISO-8601; default now)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument(
        "--late-fraction",
        type=float,
        default=0.01,
        help="share of events minutes late (default 0.01)",
    )
    p.add_argument(
        "--out-of-order",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="jitter of event times (default 5)",
    )
    p.add_argument(
        "--malformed-fraction",
        type=float,
        default=0.001,
        help="share of messages that do not decode (default 0.001)",
    )
    p.set_defaults(run=cmd_generate)

    p = sub.add_parser("dev", help="local development services")
    dev = p.add_subparsers(dest="dev_command", metavar="SERVICE", required=True)
    cli_clusters.add_dev_commands(dev)
    kafka = dev.add_parser("kafka", help="a local Kafka broker (KRaft) on 127.0.0.1")
    actions = kafka.add_subparsers(dest="kafka_command", metavar="ACTION", required=True)
    port = argparse.ArgumentParser(add_help=False)
    port.add_argument(
        "--port", type=int, default=9092, help="broker port (the controller uses port + 1)"
    )
    port.add_argument(
        "--state-dir", type=Path, default=None, help="data and logs (default: .workbench/kafka)"
    )
    q = actions.add_parser(
        "up",
        help="start the broker, or a cluster of brokers (idempotent)",
        description="Start one broker on --port (controller on port + 1), or with "
        "--brokers N a KRaft cluster of N nodes on --port, --port + 2... (each node's "
        "controller one above its broker), node i's data in STATE_DIR/broker-i.",
        parents=[port],
    )
    q.add_argument(
        "--brokers",
        type=int,
        default=1,
        choices=range(1, 10),
        metavar="N",
        help="brokers in the cluster (default 1; 3 survives the loss of one)",
    )
    q.add_argument("--topic", action="append", default=[], help="create this topic (repeatable)")
    q.add_argument("--partitions", type=int, default=3, help="partitions of new topics")
    q.add_argument(
        "--advertised-port",
        type=int,
        metavar="PORT",
        help="one broker: advertise this port (a chaos fault proxy's) to clients",
    )
    q.add_argument(
        "--replication",
        type=int,
        default=None,
        help="replication factor of new topics (default: the brokers, at most 3)",
    )
    q.set_defaults(run=cmd_kafka_up)
    q = actions.add_parser("down", help="stop the broker and the cluster's brokers", parents=[port])
    q.set_defaults(run=cmd_kafka_down)
    q = actions.add_parser(
        "status",
        help="the brokers that answer of those configured (exit 1 if any is down, 3 if none runs)",
        parents=[port],
    )
    q.set_defaults(run=cmd_kafka_status)
    from workbench.cli import mirror as cli_mirror

    cli_mirror.add_dev_commands(dev)
