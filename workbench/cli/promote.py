"""``workbench promote NOTEBOOK.ipynb --team TEAM``: a notebook to a production job.

Each step prints as it ends, with its time (papermill, parity, submit); the last line
names the job, its version and status. ``--dry-run`` stops after the parity check and
prints the spec and the parity result. ``-p KEY VALUE`` values are YAML (``-p events 0``,
``-p sinks '[{type: log}]'``); timestamps stay text.
"""

from __future__ import annotations

import argparse
import json

from workbench.exceptions import WorkbenchError


def cmd_promote(args: argparse.Namespace) -> int:
    from workbench.promote import parameter, prepare, submit

    if not args.team and not args.dry_run:
        raise WorkbenchError("give the team that owns the job: --team TEAM")
    params = {key: parameter(value) for key, value in args.parameters}
    say = lambda text: print(text, flush=True)  # noqa: E731
    promotion = prepare(args.notebook, name=args.name, params=params, kernel=args.kernel,
                        workdir=args.workdir, emit=say)  # fmt: skip
    if args.dry_run:
        print(f"--- spec ({promotion.name})\n{promotion.spec_yaml.rstrip()}")
        print(f"--- parity\n{json.dumps(promotion.parity, indent=2)}")
        print(f"dry run: nothing submitted; the executed notebook is in {promotion.workdir}")
        return 0
    job = submit(promotion, args.team, cluster=args.cluster, server=args.server,
                 token=args.token, emit=say, schema_version=args.schema_version)  # fmt: skip
    print(f"job {job.get('name')}: version {job.get('version')}, {job.get('status')}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "promote",
        help="promote a notebook to a production job",
        description="Execute the notebook with papermill in a fresh kernel in promote mode "
        "(it records its spec, sample and preview; no stream starts), check that the "
        "production plan gives the preview's rows over the same sample offsets, then submit "
        "the spec and the executed notebook to the job service, which starts the job.",
    )
    p.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    p.add_argument("--team", help="the team that owns the job (required unless --dry-run)")
    p.add_argument("--name", help="the job's name (default: the dagger spec's name)")
    p.add_argument("--cluster", help="the cluster to run on (default: the service's)")
    p.add_argument(
        "--schema-version",
        type=int,
        metavar="N",
        help="the published schema version to pin (default: the latest; `workbench schemas "
        "versions`)",
    )
    p.add_argument(
        "-p",
        "--parameter",
        dest="parameters",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="a papermill parameter; VALUE is YAML (repeatable)",
    )
    p.add_argument("--kernel", help="the Jupyter kernel (default: the notebook's own)")
    p.add_argument(
        "--workdir",
        metavar="DIR",
        help="keep the executed notebook, the record and the replay here "
        "(default: $WORKBENCH_HOME/promote/NOTEBOOK-TIME)",
    )
    p.add_argument("--server", help="the job service URL (default: $WORKBENCH_SERVER, else "
                   "the local service)")  # fmt: skip
    p.add_argument("--token", help="API token (default: $WORKBENCH_TOKEN)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="papermill and the parity check only: print the spec and parity, submit nothing",
    )
    p.set_defaults(run=cmd_promote)
