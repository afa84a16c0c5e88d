"""``workbench dashboard``: the dashboard notebook served by Voila on 127.0.0.1.

Voila runs the notebook in a fresh kernel per visitor and shows only its widgets and
markdown (code hidden, no tracebacks). The settings reach that kernel as
``WORKBENCH_DASHBOARD_*`` environment variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from workbench.dashboard.config import DashboardConfig

HOST = "127.0.0.1"
#: A Voila template (``jupyter/voila/templates/workbench``): lab's, with no CDN links.
TEMPLATE = "workbench"
JUPYTER_DATA = Path(__file__).resolve().parent / "jupyter"


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
    ]


def environment(config: DashboardConfig) -> dict[str, str]:
    """The server's environment: the settings, and the template folder on JUPYTER_PATH."""
    paths = [str(JUPYTER_DATA), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    return {**os.environ, **config.environment(), "JUPYTER_PATH": os.pathsep.join(paths)}


def start(
    config: DashboardConfig, port: int, notebook: Path | None = None
) -> subprocess.Popen[bytes]:
    """The Voila server as a child process (for tests and embedding)."""
    from workbench.dashboard.notebook import bundled_path

    command = voila_command(notebook or bundled_path(), port)
    return subprocess.Popen(command, env=environment(config), stdin=subprocess.DEVNULL)


def serve(config: DashboardConfig, port: int, notebook: Path | None = None) -> int:
    """Run Voila in the foreground until Ctrl-C; its exit code."""
    print(f"city dashboard on http://{HOST}:{port}/ (store: {config.store}); Ctrl-C stops it")
    server = start(config, port, notebook)
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        server.wait(15)
        return 0
