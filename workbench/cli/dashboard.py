"""``workbench dashboard``: serve the city dashboard (Voila) behind the job service's login,
or with ``--local`` on 127.0.0.1 with no login."""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_dashboard(args: argparse.Namespace) -> int:
    from workbench.dashboard.behind_login import Login
    from workbench.dashboard.config import DashboardConfig
    from workbench.dashboard.serve import HOST, serve
    from workbench.exceptions import WorkbenchError

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
    if args.local:
        if args.ip not in (None, HOST):
            raise WorkbenchError(
                f"--local serves with no login, so only on {HOST}: drop --ip {args.ip}, or "
                "drop --local to serve behind the job service's login"
            )
        return serve(config, args.port, args.notebook)
    login = Login(args.state, args.service_config, args.ip or HOST)
    login.check()  # nobody could log in: say so now, before starting a server
    return serve(config, args.port, args.notebook, login)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dashboard",
        help="serve the city dashboard (Voila) behind the job service's login, or --local",
        description="Serve the map dashboard for city heads: choose city, service type and "
        "metric; the map and time series come from the results store and refresh on a "
        "timer. Code cells are hidden. By default it runs in a Jupyter server (Voila's "
        "server extension) where users log in with their job service token (the service "
        "config's tokens, as `workbench serve`); the teams file's viewers see the dashboard "
        "only, for their cities. --local serves it with no login on 127.0.0.1 (a laptop). "
        "Settings: --config YAML, WORKBENCH_DASHBOARD_* environment variables, then these "
        "options.",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="no login: standalone Voila on 127.0.0.1, every city, for one laptop",
    )
    p.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="job service state folder whose service.yaml names the tokens and teams file "
        "(default: $WORKBENCH_HOME/service, as `workbench serve`)",
    )
    p.add_argument(
        "--service-config",
        type=Path,
        metavar="FILE",
        help="job service config file (default: STATE/service.yaml)",
    )
    p.add_argument(
        "--ip",
        help="address to listen on behind the login (default 127.0.0.1; e.g. 0.0.0.0 for "
        "city heads on the network, best behind HTTPS)",
    )
    p.add_argument(
        "--store",
        metavar="KIND:TARGET",
        help="influx1:http://HOST:8086/DATABASE, victoriametrics:http://HOST:8428 or "
        "parquet:FOLDER (default: the demo's Parquet folder)",
    )
    p.add_argument("--measurement", help="measurement (series prefix) to read (default: surge)")
    p.add_argument("--config", help="a dashboard YAML file")
    p.add_argument("--port", type=int, default=8866, help="port (default 8866)")
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
