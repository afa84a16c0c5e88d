"""The job service commands: ``workbench serve`` and ``workbench jobs ...``.

``jobs`` talks to the service at ``--server URL`` (``$WORKBENCH_SERVER``) with ``--token T``
(``$WORKBENCH_TOKEN``), else to the embedded default (the local service, started on first
use). Output is for people; ``--json`` where a script wants the data.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from workbench.userfiles import read_text


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from workbench.server.app import serve

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for quiet in ("tornado.access", "alembic"):  # failed requests only; no migration chatter
        logging.getLogger(quiet).setLevel(logging.WARNING)
    return serve(args.state, args.config, host=args.host, port=args.port)


def _client(args: argparse.Namespace):
    from workbench.client.rest import ServiceClient

    return ServiceClient(args.server, args.token)


def cmd_list(args: argparse.Namespace) -> int:
    jobs = _client(args).list_jobs(team=args.team, archived=args.all)
    if args.json:
        _print_json(jobs)
    elif not jobs:
        print("no jobs" + (f" of team {args.team}" if args.team else ""))
    else:
        print(jobs_table(jobs))
    return 0


def _run_line(run: dict | None) -> str:
    if not run:
        return "-"
    where = f"in shared application {run['host']} " if run.get("host") else ""
    return f"{run.get('id')} {where}pid {run.get('pid')} since {run.get('started_at')}"


def _error_line(job: dict) -> str:
    """The job's last error, with when and in which run (or what it waits for)."""
    error = job.get("last_error")
    if not error:
        return "-"
    where = [f"at {job['last_error_at']}"] if job.get("last_error_at") else []
    where += [f"run {job['last_error_run']}"] if job.get("last_error_run") else []
    return f"{error} ({', '.join(where)})" if where else str(error)


def cmd_show(args: argparse.Namespace) -> int:
    client = _client(args)
    job = client.get_job(args.job)
    if args.json:
        _print_json(job)
        return 0
    run = job.get("run") or {}
    rows = [
        ("job", f"{job['name']} (id {job['id']})"),
        ("team", job["team"]),
        ("status", f"{job['status']} (desired: {job.get('desired', '-')})"),
        ("version", job["version"]),
        ("schema version", job.get("schema_version") or "bundled"),
        ("cluster", job.get("cluster")),
        ("created", f"{job.get('created_at')} by {job.get('created_by')}"),
        ("run", _run_line(run)),
        ("failures", job.get("failures", 0)),
        ("checkpoint", job.get("checkpoint")),
        ("last error", _error_line(job)),
        ("alerts firing", job.get("alerts_firing", 0)),
        ("health", client.health_url(job["id"])),
    ]
    rows += [(f"  {k}", v) for k, v in (job.get("metrics") or {}).items()]
    for key, value in rows:
        text = "-" if value is None else str(value)
        print(f"{key + ':':<24} " + text.replace("\n", "\n" + " " * 25))
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    import yaml

    text = read_text(args.spec, "spec", "SPEC.yaml")
    name = args.name or (yaml.safe_load(text) or {}).get("name")
    if not name:
        from workbench.exceptions import WorkbenchError

        raise WorkbenchError(f"{args.spec} has no 'name': give --name NAME")
    job = _client(args).submit(
        name=name,
        team=args.team,
        spec_yaml=text,
        cluster=args.cluster,
        note=args.note,
        schema_version=args.schema_version,
    )
    print(_said(job, "submitted"))
    return 0


def cmd_action(args: argparse.Namespace) -> int:
    job = getattr(_client(args), args.action)(args.job)
    print(
        _said(job, {"stop": "stopping", "start": "starting", "restart": "restarting"}[args.action])
    )
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    job = _client(args).move(args.job, args.cluster)
    print(_said(job, "moving", f" to cluster {job.get('cluster')}"))
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    text = read_text(args.spec, "spec", "SPEC.yaml")
    job = _client(args).edit(args.job, text, note=args.note, schema_version=args.schema_version)
    print(_said(job, "edited"))
    return 0


def _schema_version_arg(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--schema-version",
        type=int,
        metavar="N",
        help=f"the published schema version to pin ({default}); see `workbench schemas versions`",
    )


def cmd_rollback(args: argparse.Namespace) -> int:
    job = _client(args).rollback(args.job, args.version)
    print(_said(job, "rolled back", f" (a copy of version {args.version})"))
    return 0


def cmd_failover(args: argparse.Namespace) -> int:
    job = _client(args).failover(args.job, args.kafka_cluster, args.reason)
    print(_said(job, "failing over", f" (streams to Kafka cluster {args.kafka_cluster})"))
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.follow:
        for text in client.follow_logs(args.job, run=args.run_id):
            sys.stdout.write(text)
            sys.stdout.flush()
        return 0
    offset = 0
    while True:
        piece = client.logs(args.job, run=args.run_id, offset=offset)
        sys.stdout.write(piece["text"])
        if not piece["text"]:
            return 0
        offset = piece["next_offset"]


def cmd_versions(args: argparse.Namespace) -> int:
    versions = _client(args).versions(args.job)
    if args.json:
        _print_json(versions)
        return 0
    rows = [
        (
            ("*" if v.get("current") else " ") + str(v["number"]),
            v.get("author") or "-",
            _short_time(v.get("created_at")),
            (v.get("spec_hash") or "-")[:12],
            (v.get("notebook_sha256") or "-")[:12],
            _parity(v.get("parity")),
            v.get("schema_version") or "bundled",
            v.get("note") or "",
        )
        for v in versions
    ]
    header = ("VERSION", "AUTHOR", "CREATED", "SPEC HASH", "NOTEBOOK", "PARITY", "SCHEMAS", "NOTE")
    print(table(header, rows))
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    events = _client(args).events(args.job, last=args.last)
    if args.json:
        _print_json(events)
        return 0
    rows = [
        (
            _short_time(e.get("time")),
            e.get("actor") or "-",
            e.get("action"),
            json.dumps(e["detail"]) if e.get("detail") else "",
        )
        for e in events
    ]
    print(table(("TIME", "ACTOR", "ACTION", "DETAIL"), rows))
    return 0


# -- rendering ----------------------------------------------------------------------------
def jobs_table(jobs: list[dict]) -> str:
    header = ("NAME", "TEAM", "STATUS", "VERSION", "IN/S", "PROCESSED/S", "BEHIND", "LAST BATCH")
    rows = []
    for job in jobs:
        m = job.get("metrics") or {}
        rows.append(
            (
                job["name"],
                job["team"],
                job["status"],
                job["version"],
                _number(m.get("input_rate")),
                _number(m.get("processed_rate")),
                "-" if m.get("offsets_behind_latest") is None else m["offsets_behind_latest"],
                _ago(m.get("last_batch_at")),
            )
        )
    return table(header, rows)


def table(header: tuple, rows: list[tuple]) -> str:
    cells = [
        tuple(map(str, header)),
        *(tuple("-" if c is None else str(c) for c in r) for r in rows),
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def _number(value) -> str:
    return "-" if value is None else f"{float(value):,.1f}"


def _ago(stamp: str | None) -> str:
    if not stamp:
        return "-"
    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return str(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = max(0, int((datetime.now(UTC) - moment).total_seconds()))
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h ago"


def _short_time(stamp) -> str:
    return str(stamp or "-").replace("T", " ")[:19]


def _parity(parity) -> str:
    """The parity check of a version as promote recorded it: ``passed (431 rows)``."""
    if not isinstance(parity, dict) or not parity.get("status"):
        return "-"
    rows = f" ({parity['rows']:,} rows)" if isinstance(parity.get("rows"), int) else ""
    return f"{parity['status']}{rows}"


def _said(job: dict, verb: str, tail: str = "") -> str:
    return (
        f"{verb} job {job['name']} (id {job['id']}, team {job['team']}): "
        f"version {job['version']}{tail}, status {job['status']}"
    )


def _print_json(data) -> None:
    print(json.dumps(data, indent=2, default=str))


# -- parsers ------------------------------------------------------------------------------
def add_commands(sub: argparse._SubParsersAction) -> None:
    _add_serve(sub)
    p = sub.add_parser(
        "jobs",
        help="list, inspect, stop, edit and roll back production jobs",
        description="Talk to the job service at --server (or $WORKBENCH_SERVER), else to the "
        "local one (started on first use, state in $WORKBENCH_HOME/service).",
    )
    _connection(p, None)
    actions = p.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)
    conn = argparse.ArgumentParser(add_help=False)
    _connection(conn, argparse.SUPPRESS)

    def action(name: str, text: str, run, job: bool = True, json_of: str = ""):
        q = actions.add_parser(name, help=text, parents=[conn])
        if job:
            q.add_argument("job", metavar="JOB", help="job name or id")
        if json_of:
            q.add_argument("--json", action="store_true", help=f"print the {json_of} as JSON")
        q.set_defaults(run=run)
        return q

    q = action("list", "the jobs you may see, with live metrics", cmd_list, False, "jobs")
    q.add_argument("--team", help="only this team's jobs")
    q.add_argument("--all", action="store_true", help="archived jobs too")
    action("show", "one job: status, run, metrics", cmd_show, json_of="job")

    q = action("submit", "run a spec as a new job (or a new version)", cmd_submit, job=False)
    q.add_argument("spec", metavar="SPEC.yaml")
    q.add_argument("--team", required=True, help="the team that owns the job")
    q.add_argument("--name", help="job name (default: the spec's name)")
    q.add_argument("--cluster", help="cluster to run on (default: the first configured)")
    q.add_argument("--note", default="", help="a note kept with the version")
    _schema_version_arg(q, "default: the latest published")

    for verb, text in (
        ("stop", "stop gracefully (after the current micro-batch)"),
        ("start", "start a stopped or failed job from its checkpoint"),
        ("restart", "stop, then start from the checkpoint"),
    ):
        action(verb, text, cmd_action).set_defaults(action=verb)

    q = action("edit", "a new version from a spec file", cmd_edit)
    q.add_argument("spec", metavar="SPEC.yaml")
    q.add_argument("--note", default="", help="a note kept with the version")
    _schema_version_arg(q, "default: keep the current version's")

    q = action("rollback", "make an earlier version current", cmd_rollback)
    q.add_argument("--version", type=int, required=True, metavar="N")

    q = action("logs", "the current run's log", cmd_logs)
    q.add_argument("--follow", "-f", action="store_true", help="keep printing as it grows")
    q.add_argument("--run", dest="run_id", help="an earlier run's id (see `jobs events`)")

    action("versions", "the job's versions", cmd_versions, json_of="versions")
    q = action("events", "who did what, and what the supervisor did", cmd_events, json_of="events")
    q.add_argument("--last", type=int, default=100, metavar="N", help="the last N (default 100)")
    q = action(
        "failover",
        "move the job's streams to a mirror Kafka cluster (MirrorMaker 2)",
        cmd_failover,
    )
    q.description = (
        "A new version whose streams read Kafka cluster NAME (the mirror their cluster "
        "names as standby), with a new checkpoint: it starts where MirrorMaker 2 translated "
        "the job's committed offsets (earliest where it has none) and writes no window the "
        "old checkpoint wrote. The running job stops first."
    )
    q.add_argument(
        "--kafka-cluster", required=True, metavar="NAME", help="the mirror, in kafka_clusters"
    )
    q.add_argument("--reason", default="", help="why (kept in the job's events)")

    q = action("move", "stop, then start on another Spark cluster from the checkpoint", cmd_move)
    q.add_argument("--cluster", required=True, help="the cluster to run on (clusters list)")

    from workbench.cli import job_archive

    job_archive.add_actions(action)


def _connection(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument(
        "--server", default=default, metavar="URL", help="job service URL ($WORKBENCH_SERVER)"
    )
    parser.add_argument(
        "--token", default=default, metavar="T", help="API token ($WORKBENCH_TOKEN)"
    )


def _add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the job service (REST API and supervisor)",
        description="Serve the job service's REST API at /workbench/api/ and supervise its "
        "jobs until SIGTERM (jobs keep running; the next start re-attaches to them).",
    )
    p.add_argument("--port", type=int, default=8765, help="port (0: a free one; default 8765)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--state", type=Path, metavar="DIR", help="state folder (default: $WORKBENCH_HOME/service)"
    )
    p.add_argument(
        "--config", type=Path, metavar="FILE", help="config file (default: STATE/service.yaml)"
    )
    p.set_defaults(run=cmd_serve)
