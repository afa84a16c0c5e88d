"""``workbench dashboard``: serve the city dashboard (Voila) on 127.0.0.1."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_dashboard(args: argparse.Namespace) -> int:
    from workbench.dashboard.config import DashboardConfig
    from workbench.dashboard.serve import serve

    config = DashboardConfig.load(
        args.config,
        store=args.store,
        measurement=args.measurement,
        refresh_seconds=args.refresh,
        hours=args.hours,
        area=args.area,
        style=args.style,
    )
    config.open_store()  # a malformed store name fails here, before Voila starts
    return serve(config, args.port, args.notebook)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dashboard",
        help="serve the city dashboard (Voila) on 127.0.0.1",
        description="Serve the map dashboard for city heads: choose city, service type and "
        "metric; the map and time series come from the results store and refresh on a "
        "timer. Code cells are hidden. Settings: --config YAML, WORKBENCH_DASHBOARD_* "
        "environment variables, then these options.",
    )
    p.add_argument(
        "--store",
        metavar="KIND:TARGET",
        help="influx1:http://HOST:8086/DATABASE, victoriametrics:http://HOST:8428 or "
        "parquet:FOLDER (default: the demo's Parquet folder)",
    )
    p.add_argument("--measurement", help="measurement (series prefix) to read (default: surge)")
    p.add_argument("--config", help="a dashboard YAML file")
    p.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 (default 8866)")
    p.add_argument("--refresh", type=float, metavar="SECONDS", help="refresh period (30)")
    p.add_argument("--hours", type=float, help="hours of results shown (6)")
    p.add_argument("--area", help="city shown first (jakarta)")
    p.add_argument(
        "--style",
        help="basemap: none (default), light, dark or satellite; offline, the map keeps its "
        "bundled coastlines and says the basemap is unavailable",
    )
    p.add_argument("--notebook", type=Path, help="serve another dashboard notebook")
    p.set_defaults(run=cmd_dashboard)
