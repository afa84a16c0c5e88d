"""``workbench``: the command line. Heavy imports (Spark, protobuf) happen inside commands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from workbench import __version__
from workbench.cli.args import check_sample, table_arg
from workbench.exceptions import WorkbenchError

Command = Callable[[argparse.Namespace], int]


def _report_spark_start() -> None:
    """``spark: started in 4.6s (JVM 1.1s, ...)`` on stderr when Spark has started (stdout
    keeps only the command's result)."""
    from workbench.runtime.spark import ON_START

    if _print_start not in ON_START:
        ON_START.append(_print_start)


def _print_start(times) -> None:
    print(times.line(), file=sys.stderr, flush=True)


def cmd_replay(args: argparse.Namespace) -> int:
    from workbench import spec as spec_module
    from workbench.lab.replay import check_tables, replay
    from workbench.runtime.spark import session
    from workbench.userfiles import read_text, writable

    _report_spark_start()
    if bool(args.table) == bool(args.sample):
        raise WorkbenchError("give recordings (--table NAME=PATH) or samples (--sample FILE)")
    spec = spec_module.load(args.spec) if args.spec else None
    sql = read_text(args.sql, "SQL", "--sql") if args.sql else None
    writable(args.out, "--out")
    if args.rejects:
        writable(args.rejects, "--rejects")
    if args.table:
        check_tables([name for name, _ in args.table], sql, spec)
        _not_an_input(args.out, args.table)
    for sample in args.sample or []:
        check_sample(sample)
    if args.sample:
        from workbench.lab.replay import replay_samples

        done = replay_samples(session(), args.sample, args.out, sql=sql, spec=spec)
        print(f"wrote {done.rows} rows to {done.out}, {done.undecodable} undecodable records")
        return 0
    result = replay(
        None,  # started once the recordings are checked
        dict(args.table),
        args.out,
        sql=sql,
        spec=spec,
        rowtime_field=args.rowtime_field,
        rejects_path=args.rejects,
    )
    rejected = f", {len(result.rejects)} rejected rows in {args.rejects}" if result.rejects else ""
    print(f"wrote {result.rows} rows to {result.out}{rejected}")
    return 0


def _not_an_input(out: str, tables: list[tuple[str, str]]) -> None:
    """``--out`` must not overwrite a recording."""
    for name, path in tables:
        if Path(path).resolve() == Path(out).resolve():
            raise WorkbenchError(
                f"--out {out} is the recording of --table {name}: write the result elsewhere"
            )


def cmd_validate(args: argparse.Namespace) -> int:
    from workbench.streaming.validate import validate

    _report_spark_start()
    report = validate(args.spec)
    print(report.render(show_sql=args.show_sql))
    return 0


def cmd_import_dagger(args: argparse.Namespace) -> int:
    from workbench.dagger_import.convert import import_job
    from workbench.exceptions import UnsupportedDaggerError
    from workbench.userfiles import writable

    if args.out:
        writable(args.out, "--out")
    result = import_job(args.file, name=args.name)
    if result.unsupported and not args.ignore_unsupported:
        raise UnsupportedDaggerError(args.file, result.dropped)
    for dropped in result.dropped:
        label = "warning" if dropped.unsupported else "note"
        print(f"{label}: not carried over: {dropped.render()}", file=sys.stderr)
    text = result.spec.to_yaml()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_schemas_list(args: argparse.Namespace) -> int:
    from workbench.schemas import default_registry_with

    registry = default_registry_with(args.schemas)
    for name in registry.messages():
        print(name)
    return 0


def cmd_schemas_show(args: argparse.Namespace) -> int:
    from workbench.schemas import ddl, default_registry_with
    from workbench.schemas.registry import tree_lines

    registry = default_registry_with(args.schemas)
    descriptor = registry.descriptor(args.message)
    if args.json:
        print(json.dumps([f.to_dict() for f in registry.fields(args.message)], indent=2))
        return 0
    print(f"{descriptor.full_name}  ({descriptor.file.name})")
    for line in tree_lines(registry.fields(args.message)):
        print(line)
    if args.ddl:
        print(f"\nSpark DDL: {ddl(descriptor)}")
    return 0


def cmd_udfs(args: argparse.Namespace) -> int:
    from workbench.udfs import UDFS

    for udf in UDFS:
        print(f"{udf.signature:<72} {udf.kind:<9} {udf.doc}")
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    from workbench.dev.setup import prepare

    prepare()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from workbench.dev.demo import DemoOptions, run_demo

    return run_demo(
        DemoOptions(
            seconds=args.seconds,
            rate=args.rate,
            speedup=args.speedup,
            seed=args.seed,
            port=args.port,
            influx_url=args.influx_url,
            kafka_dir=args.kafka_dir,
        )
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench", description="Dagger Workbench: Flink-style dagger SQL on Spark."
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "replay",
        help="run dagger SQL as a batch over recorded events",
        description="Run a spec's SQL (or a .sql file) over JSON Lines or "
        "Parquet recordings; write the result rows as JSON Lines.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("spec", nargs="?", help="a dagger spec (YAML)")
    source.add_argument("--sql", metavar="QUERY.sql", help="a file holding the dagger SQL")
    p.add_argument(
        "--table",
        action="append",
        type=table_arg,
        metavar="NAME=PATH",
        help="a recording for table NAME (repeatable)",
    )
    p.add_argument(
        "--sample",
        action="append",
        metavar="FILE",
        help="read exactly the Kafka offsets of a saved sample instead (repeatable)",
    )
    p.add_argument(
        "--rowtime-field",
        metavar="FIELD",
        default=None,
        help="field holding the event time: ISO-8601 or epoch ms "
        "(default: the spec's event_timestamp_field, else event_timestamp)",
    )
    p.add_argument("--out", required=True, metavar="OUT.jsonl", help="where to write rows")
    p.add_argument(
        "--rejects",
        metavar="FILE",
        help="write unreadable input rows here and go on (default: fail)",
    )
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser(
        "validate",
        help="check a spec without running it",
        description="Parse the spec, resolve its messages and fields, "
        "translate and analyse its SQL. Exit 1 on any error.",
    )
    p.add_argument("spec", help="a spec (YAML): a dagger, or kind: quality")
    p.add_argument("--show-sql", action="store_true", help="print the translated Spark SQL")
    p.set_defaults(run=cmd_validate)

    p = sub.add_parser(
        "import-dagger",
        help="convert a Dagger .properties file to a spec",
        description="Read a Dagger job's .properties (FLINK_SQL_QUERY, STREAMS, "
        "SINK_*...) and print the equivalent dagger spec (YAML).",
    )
    p.add_argument("file", metavar="FILE.properties")
    p.add_argument("--out", metavar="SPEC.yaml", help="write the spec here (default: stdout)")
    p.add_argument("--name", help="dagger name (default: FLINK_JOB_ID or the file's name)")
    p.add_argument(
        "--ignore-unsupported",
        action="store_true",
        help="import even when keys the spec cannot express (processors, Longbow, ...) "
        "would change the output; they are listed as warnings",
    )
    p.set_defaults(run=cmd_import_dagger)

    p = sub.add_parser("schemas", help="list protobuf messages or show one")
    schemas = p.add_subparsers(dest="schemas_command", metavar="ACTION", required=True)
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument(
        "--schemas",
        action="append",
        default=[],
        metavar="PATH_OR_URL",
        help="extra .proto folder, descriptor set or URL (repeatable)",
    )
    q = schemas.add_parser("list", help="list known messages", parents=[extra])
    q.set_defaults(run=cmd_schemas_list)
    q = schemas.add_parser("show", help="show a message's fields", parents=[extra])
    q.add_argument("message", help="full, Java class or unique simple name")
    q.add_argument("--json", action="store_true", help="print the field tree as JSON")
    q.add_argument("--ddl", action="store_true", help="also print the Spark schema as DDL")
    q.set_defaults(run=cmd_schemas_show)
    from workbench.cli import schemas as cli_schemas

    cli_schemas.add_actions(schemas)

    p = sub.add_parser("udfs", help="list the dagger UDFs")
    p.set_defaults(run=cmd_udfs)

    p = sub.add_parser(
        "setup",
        help="fetch jars, build the UDF jar, compile schemas",
        description="Prepare everything a first run needs (idempotent).",
    )
    p.set_defaults(run=cmd_setup)

    p = sub.add_parser(
        "demo",
        help="the surge-pricing dagger streaming on a local Kafka broker",
        description="Start the local broker, publish generated bookings while the bundled "
        "surge-pricing dagger runs, print the busiest cells and check every closed window.",
    )
    p.add_argument("--seconds", type=float, default=45.0, help="wall seconds of publishing")
    p.add_argument("--rate", type=float, default=300.0, help="bookings per event-time second")
    p.add_argument("--speedup", type=float, default=6.0, help="event-time seconds per wall second")
    p.add_argument("--seed", type=int, default=7, help="generator seed")
    p.add_argument("--port", type=int, default=9092, help="broker port (controller: port + 1)")
    p.add_argument("--kafka-dir", type=Path, help="broker state (default: .workbench/kafka)")
    p.add_argument("--influx-url", help="also write to this InfluxDB 1.x (database 'dagger')")
    p.set_defaults(run=cmd_demo)

    from workbench.cli.streaming import add_commands

    add_commands(sub)
    from workbench.cli import notebook as cli_notebook

    cli_notebook.add_commands(sub)
    from workbench.cli import dashboard as cli_dashboard

    cli_dashboard.add_commands(sub)
    from workbench.cli import jobs as cli_jobs

    cli_jobs.add_commands(sub)
    from workbench.cli import promote as cli_promote

    cli_promote.add_commands(sub)
    from workbench.cli import alerts as cli_alerts

    cli_alerts.add_commands(sub)
    from workbench.cli import clusters as cli_clusters

    cli_clusters.add_commands(sub)
    from workbench.cli import kafka_clusters as cli_kafka_clusters

    cli_kafka_clusters.add_commands(sub)
    from workbench.cli import chaos as cli_chaos

    cli_chaos.add_commands(sub)
    from workbench.cli import warehouse as cli_warehouse

    cli_warehouse.add_commands(sub)
    from workbench.cli import service as cli_service

    cli_service.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _quiet_jvm(verbose=getattr(args, "verbose", False))
    try:
        return args.run(args)
    except WorkbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return 0


def _quiet_jvm(verbose: bool) -> None:
    """A Spark JVM started by a command writes its start-up lines, warnings and Java
    stacks to ``$WORKBENCH_HOME/logs/spark-cli.log``, not the terminal: errors are one
    line. ``--verbose`` (or ``WORKBENCH_SPARK_LOG=stderr``) keeps them on stderr."""
    from workbench.paths import subdir
    from workbench.runtime import jvm_log

    if not verbose:
        jvm_log.to_file(subdir("logs") / "spark-cli.log")


if __name__ == "__main__":
    sys.exit(main())
