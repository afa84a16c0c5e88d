"""``workbench dashboard``: the dashboard notebook served by Voila, behind a login in a
Jupyter server (:mod:`workbench.dashboard.behind_login`), or with ``--local`` standalone
on 127.0.0.1 with no login.

Voila runs the notebook in a fresh kernel per visitor and shows only its widgets and
markdown (code hidden, no tracebacks). The whole configuration reaches that kernel as a
private YAML file (``WORKBENCH_DASHBOARD_CONFIG``; see
:meth:`~workbench.dashboard.config.DashboardConfig.environment`), removed when the server
stops. SIGTERM or SIGINT (Ctrl-C) to ``workbench dashboard`` stops Voila and its kernels
before it exits; on Linux Voila also gets SIGTERM if its parent dies any other way.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

from workbench.atlas.shared import voila_static_root
from workbench.dashboard import behind_login
from workbench.dashboard.behind_login import Login
from workbench.dashboard.config import DashboardConfig
from workbench.dashboard.notebook import bundled_path
from workbench.dashboard.processes import descendants, end_all
from workbench.settings import settings

HOST = "127.0.0.1"
#: A Voila template (``jupyter/voila/templates/workbench``): lab's, with no CDN links.
TEMPLATE = "workbench"
JUPYTER_DATA = Path(__file__).resolve().parent / "jupyter"
STOP_SECONDS = 15.0


def voila_command(notebook: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        f"--port={port}",
        f"--Voila.ip={HOST}",
        "--Voila.port_retries=0",
        "--no-browser",
        "--strip_sources=True",
        "--show_tracebacks=False",
        "--theme=light",
        f"--template={TEMPLATE}",
        f"--VoilaConfiguration.extension_denylist={behind_login.HIDDEN_LAB_EXTENSIONS!r}",
    ]


def environment(config: DashboardConfig, private: Path) -> dict[str, str]:
    """The server's environment: the configuration (a file in the ``private`` folder), and
    the template folders (the template; deck.gl as its static file) on JUPYTER_PATH."""

    roots = [str(JUPYTER_DATA), str(voila_static_root())]
    paths = [*roots, *filter(None, [settings().jupyter_path])]
    env = config.environment(private / "dashboard.yaml")
    return env | {"JUPYTER_PATH": os.pathsep.join(paths)}


def start(
    config: DashboardConfig,
    port: int,
    notebook: Path | None = None,
    login: Login | None = None,
) -> subprocess.Popen[bytes]:
    """The server as a child process in its own session (for tests and embedding):
    standalone Voila on 127.0.0.1 (no ``login``), or a Jupyter server with Voila's
    extension and ``login``'s users. ``.private`` is the folder holding its configuration,
    for :func:`stop` to remove."""

    private = Path(tempfile.mkdtemp(prefix="workbench-dashboard-"))  # mode 0700
    notebook = notebook or bundled_path()
    if login is None:
        command = voila_command(notebook, port)
    else:
        command = behind_login.prepare(private, login, port, notebook)
    server = subprocess.Popen(
        command,
        env=environment(config, private),
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # signals reach it from us, which then waits for it
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
    )
    server.private = private  # type: ignore[attr-defined]
    return server


def stop(server: subprocess.Popen[bytes]) -> int:
    """Stop Voila, then anything it left running (kernels); remove its private folder."""
    children = descendants(server.pid)
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        code = server.wait()
    end_all(children, STOP_SECONDS)
    shutil.rmtree(getattr(server, "private", ""), ignore_errors=True)
    return code


class _Stopped(Exception):
    """A stop signal arrived."""


def _stop_signal(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


def serve(
    config: DashboardConfig, port: int, notebook: Path | None = None, login: Login | None = None
) -> int:
    """Run the server in the foreground until it exits, Ctrl-C or SIGTERM; the exit code."""
    if login is None:
        where = f"http://{HOST}:{port}/ (no login)"
    else:
        where = (
            f"http://{login.ip}:{port}/{behind_login.DASHBOARD_URL} (log in with your access token)"
        )
    print(
        f"city dashboard on {where} (store: {config.public_store()}); Ctrl-C stops it",
        flush=True,
    )
    server = start(config, port, notebook, login)
    previous = {sig: signal.signal(sig, _stop_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.wait()
        return stop(server)
    except _Stopped:
        stop(server)
        return 0
    finally:
        if server.poll() is None:  # a second signal while stopping
            stop(server)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux prctl)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
