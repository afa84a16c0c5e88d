"""``workbench kafka-clusters list|show``: the job service's named Kafka clusters.

They are configured in the service config (``kafka_clusters:`` in ``STATE/service.yaml``)
and read over the API, like ``workbench jobs`` (``--server``/``--token`` or the local
service).
"""

from __future__ import annotations

import argparse
import json

from workbench.cli.jobs import _client, _connection, table


def cmd_list(args: argparse.Namespace) -> int:
    clusters = _client(args).kafka_clusters()
    if args.json:
        print(json.dumps(clusters, indent=2))
    elif not clusters:
        print("no Kafka clusters: name them under kafka_clusters in the service config")
    else:
        header = ("NAME", "BOOTSTRAP SERVERS", "SECURITY", "STANDBY", "FAILOVER AFTER")
        rows = [
            (
                c["name"],
                c["bootstrap_servers"],
                c["security"].get("security.protocol", "PLAINTEXT"),
                c.get("standby"),
                f"{c['failover_after_s']:g}s" if c.get("standby") else None,
            )
            for c in clusters
        ]
        print(table(header, rows))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    cluster = _client(args).kafka_cluster(args.name)
    if args.json:
        print(json.dumps(cluster, indent=2))
        return 0
    answer = (
        f"yes: cluster id {cluster['cluster_id']}, {cluster['brokers']} brokers"
        if cluster["reachable"]
        else f"no: {cluster['error']}"
    )
    rows = [
        ("name", cluster["name"]),
        ("bootstrap servers", cluster["bootstrap_servers"]),
        ("standby", cluster.get("standby") or "-"),
        ("failover after", _failover(cluster)),
        ("description", cluster.get("description") or "-"),
        ("answers now", answer),
        ("read by", ", ".join(_reader(j) for j in cluster.get("jobs") or []) or "-"),
    ]
    rows += [(f"  {key}", value) for key, value in cluster["security"].items()]
    for key, value in rows:
        print(f"{key + ':':<20} {value}")
    return 0


def _reader(job: dict) -> str:
    return f"{job['job']} ({job['team']}: {', '.join(job['tables'])})"


def _failover(cluster: dict) -> str:
    after = f"{cluster['failover_after_s']:g}s unreachable"
    return after if cluster.get("standby") else f"never (no standby; would be after {after})"


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "kafka-clusters",
        help="the job service's named Kafka clusters",
        description="List or show the Kafka clusters named in the job service's config "
        "(kafka_clusters: NAME: {bootstrap_servers, security, standby, failover_after_s}); "
        "a spec's streams[i].cluster: NAME reads through one. Talks to --server (or "
        "$WORKBENCH_SERVER), else to the local service.",
    )
    conn = argparse.ArgumentParser(add_help=False)
    _connection(conn, None)
    conn.add_argument("--json", action="store_true", help="print the answer as JSON")
    actions = p.add_subparsers(dest="kafka_clusters_command", metavar="ACTION", required=True)
    q = actions.add_parser(
        "list", help="every named cluster: servers, security protocol, standby", parents=[conn]
    )
    q.set_defaults(run=cmd_list)
    q = actions.add_parser(
        "show",
        help="one cluster, its security options (secrets as references) and whether it "
        "answers now (cluster id, brokers)",
        parents=[conn],
    )
    q.add_argument("name", metavar="NAME", help="the cluster's name in kafka_clusters")
    q.set_defaults(run=cmd_show)
