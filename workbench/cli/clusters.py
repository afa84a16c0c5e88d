"""Spark cluster commands: ``workbench dev spark up|down|status`` (a standalone cluster on
this machine, :mod:`workbench.dev.spark`) and ``workbench clusters list|show`` (the job
service's named clusters a caller may use)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _cluster(args: argparse.Namespace):
    from workbench.dev.spark import SparkCluster

    asked = {k: getattr(args, f"{k}_port", None) for k in ("master", "webui", "worker")}
    ports = {k: int(v) for k, v in asked.items() if v}
    return SparkCluster(
        args.state_dir, workers=getattr(args, "workers", 2), cores=getattr(args, "cores", 1),
        memory=getattr(args, "memory", "1g"), ports=ports,
    )  # fmt: skip


def _status_line(status) -> str:
    pids = ", ".join(f"{name} {pid}" for name, pid in status.pids.items())
    return (
        f"spark master at {status.master_url} ({status.alive_workers}/{status.workers} "
        f"workers alive; web UI {status.webui_url}; pids {pids}; state in {status.state_dir})"
    )


def cmd_spark_up(args: argparse.Namespace) -> int:
    status = _cluster(args).start(timeout=args.timeout)
    print(_status_line(status))
    print(f'a job service cluster for it: clusters: {{dev: {{master: "{status.master_url}"}}}}')
    return 0


def cmd_spark_down(args: argparse.Namespace) -> int:
    _cluster(args).stop()
    print("spark cluster stopped")
    return 0


def cmd_spark_status(args: argparse.Namespace) -> int:
    status = _cluster(args).status()
    if args.json:
        print(json.dumps(status.to_dict(), indent=2))
    elif status.running:
        print(_status_line(status))
    else:
        print(f"spark cluster not running (state in {status.state_dir})")
    return 0 if status.running else 3


def cmd_clusters_list(args: argparse.Namespace) -> int:
    from workbench.cli.jobs import _client, table

    found = _client(args).list_clusters()
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    header = ("NAME", "MASTER", "TEAMS", "STANDBY", "ANSWERING", "JOBS")
    rows = [
        (c["name"], c["master"], ",".join(c["teams"]) if c["teams"] else "all",
         c["standby"], _answering(c["answering"]), c["jobs"])
        for c in found
    ]  # fmt: skip
    print(table(header, rows) if rows else "no clusters you may use")
    return 0


def _answering(value: bool | None) -> str:
    return "not probed" if value is None else ("yes" if value else "NO")


def cmd_clusters_show(args: argparse.Namespace) -> int:
    from workbench.cli.jobs import _client

    found = _client(args).get_cluster(args.name)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    resources = {k: v for k, v in found["resources"].items() if v is not None}
    rows = [
        ("cluster", found["name"]),
        ("master", found["master"]),
        ("description", found["description"] or "-"),
        ("teams", ", ".join(found["teams"]) if found["teams"] else "all teams"),
        ("answering", _answering(found["answering"])),
        ("standby", found["standby"] or "-"),
        ("unreachable after", f"{found['unreachable_after_s']:g} s"),
        ("jobs per application", found["jobs_per_app"]),
        ("resources", ", ".join(f"{k}={v}" for k, v in resources.items()) or "Spark's defaults"),
        ("your jobs on it", found["jobs"]),
    ]
    rows += [(f"  {k}", v) for k, v in found["conf"].items()]
    for key, value in rows:
        print(f"{key + ':':<22} {value}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """``clusters list|show``."""
    from workbench.cli.jobs import _connection

    p = sub.add_parser(
        "clusters",
        help="the job service's Spark clusters your teams may use",
        description="List the named Spark clusters of the job service (--server or "
        "$WORKBENCH_SERVER, else the local one) that your teams may use, or show one: "
        "master, teams, standby, default resources, Spark settings, whether it answers.",
    )
    _connection(p, None)
    actions = p.add_subparsers(dest="clusters_command", metavar="ACTION", required=True)
    conn = argparse.ArgumentParser(add_help=False)
    _connection(conn, argparse.SUPPRESS)
    q = actions.add_parser("list", parents=[conn], help="the clusters you may use")
    q.add_argument("--json", action="store_true", help="print the clusters as JSON")
    q.set_defaults(run=cmd_clusters_list)
    q = actions.add_parser("show", parents=[conn], help="one cluster's settings")
    q.add_argument("name", metavar="NAME", help="the cluster's name")
    q.add_argument("--json", action="store_true", help="print the cluster as JSON")
    q.set_defaults(run=cmd_clusters_show)


def add_dev_commands(dev: argparse._SubParsersAction) -> None:
    """``dev spark up|down|status`` under the ``dev`` group."""
    p = dev.add_parser(
        "spark",
        help="a local Spark standalone cluster (master + workers) on 127.0.0.1",
        description="A real Spark standalone master and N workers from pyspark's own jars "
        "(bin/spark-class), on free ports of 127.0.0.1; pids, logs and work folders in "
        "--state-dir.",
    )
    actions = p.add_subparsers(dest="spark_command", metavar="ACTION", required=True)
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "--state-dir", type=Path, default=None,
        help="pids, logs and work folders (default: $WORKBENCH_HOME/spark)",
    )  # fmt: skip
    q = actions.add_parser(
        "up", parents=[where],
        help="start the master and workers, wait until every worker is ALIVE (idempotent)",
    )  # fmt: skip
    q.add_argument("--workers", type=int, default=2, help="workers (default 2)")
    q.add_argument("--cores", type=int, default=1, help="cores each worker offers (default 1)")
    q.add_argument(
        "--memory", default="1g", help="memory each worker offers executors (default 1g)"
    )
    q.add_argument(
        "--timeout", type=float, default=90.0, help="seconds to wait for readiness (default 90)"
    )
    q.add_argument("--master-port", type=int, help="the master's port (default: a free one)")
    q.add_argument("--webui-port", type=int, help="the master's web UI port (default: a free one)")
    q.add_argument(
        "--worker-port", type=int, metavar="PORT",
        help="worker N listens on PORT+2(N-1), its web UI on the next (default: free ones)",
    )  # fmt: skip
    q.set_defaults(run=cmd_spark_up)
    q = actions.add_parser("down", parents=[where], help="stop the workers and the master")
    q.set_defaults(run=cmd_spark_down)
    q = actions.add_parser(
        "status", parents=[where], help="master URL and alive workers (exit 3 if not running)"
    )
    q.add_argument("--json", action="store_true", help="print the status as JSON")
    q.set_defaults(run=cmd_spark_status)
