"""The notebook commands: ``workbench kernel install`` and ``workbench new``."""

from __future__ import annotations

import argparse


def _env_arg(value: str) -> tuple[str, str]:
    key, sep, setting = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{value}'")
    return key, setting


def cmd_kernel_install(args: argparse.Namespace) -> int:
    from workbench.lab.kernel import DISPLAY_NAME, KERNEL_NAME, install

    where = install(
        user=args.user,
        prefix=args.prefix,
        master=args.master,
        env=dict(args.env),
    )
    print(f"installed kernel '{KERNEL_NAME}' ({DISPLAY_NAME}) in {where}")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from workbench.notebook.scaffold import new

    path = new(args.name, args.dir)
    print(f"created {path}: open it in JupyterLab (kernel 'Dagger Workbench (PySpark)')")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    n = sub.add_parser(
        "new",
        help="create a dagger notebook from the template",
        description="Create NAME.ipynb from the 'new dagger' template: a papermill "
        "parameters cell (streams, sinks), the SQL and a preview; `workbench promote "
        "NAME.ipynb --team TEAM` then makes it a production job.",
    )
    n.add_argument("name", metavar="NAME", help="dagger name (the notebook is NAME.ipynb)")
    n.add_argument("--dir", default=".", help="folder to create it in (default: here)")
    n.set_defaults(run=cmd_new)

    p = sub.add_parser("kernel", help="the Dagger Workbench Jupyter kernel")
    actions = p.add_subparsers(dest="kernel_command", metavar="ACTION", required=True)
    q = actions.add_parser(
        "install",
        help="install the 'Dagger Workbench (PySpark)' kernel spec",
        description="Install the kernel spec 'dagger-workbench': IPython with the workbench's "
        "magics loaded and Spark (jars, UDFs) started on first use.",
    )
    where = q.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (~/.local/share)")
    where.add_argument(
        "--sys-prefix",
        dest="prefix",
        action="store_const",
        const=None,
        help="into this Python environment (the default)",
    )
    where.add_argument("--prefix", help="under this prefix (PREFIX/share/jupyter/kernels)")
    q.add_argument("--master", help="Spark master for the kernel (default: local[2])")
    q.add_argument(
        "--env",
        action="append",
        type=_env_arg,
        default=[],
        metavar="KEY=VALUE",
        help="environment variable for the kernel (repeatable), e.g. "
        "WORKBENCH_BOOTSTRAP_SERVERS=host:9092",
    )
    q.set_defaults(run=cmd_kernel_install)
