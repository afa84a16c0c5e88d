"""``workbench dashboard`` behind a login: the dashboard rendered by Voila's server
extension inside a Jupyter server, with the job service's users and teams.

Users log in once with their job-service access token
(:class:`workbench.server.login.TokenLogin`: the login page, which asks for the access
token, or ``Authorization: token T``; a cookie keeps the browser logged in); the teams file's
dashboard viewers reach the dashboard and nothing else
(:class:`workbench.server.authorizer.WorkbenchAuthorizer`), see only their cities
(:func:`workbench.dashboard.voila_hooks.prelaunch`) and cannot run code in its kernel
(:class:`workbench.server.viewer_channels.ViewerChannels`). The server's root is a private
folder holding only the dashboard notebook; JupyterLab and terminals are off in it.
"""

from __future__ import annotations

import os
import pprint
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from workbench.dashboard.errors import DashboardLoginError
from workbench.dashboard.viewers import DASHBOARD
from workbench.jobs.config import ServiceConfig

#: the dashboard's address under the server's base_url
DASHBOARD_URL = f"voila/render/{DASHBOARD}"
#: Jupyter page templates of the door: the login page asks for the access token, a 403 is
#: a page saying what was refused
TEMPLATES = Path(__file__).resolve().parent / "jupyter" / "templates"
CONFIG_FILE = "jupyter_server_config.py"


@dataclass(frozen=True)
class Login:
    """Where the users come from: the job service's state folder and config file (None:
    its defaults, as ``workbench serve``), and the address to listen on."""

    state: Path | None = None
    service_config: Path | None = None
    ip: str = "127.0.0.1"

    def check(self) -> None:
        """Fail before starting when no user could log in (the config has no tokens)."""

        config = ServiceConfig.load(self.state, self.service_config)
        if not config.all_tokens():
            where = self.service_config or config.state_dir / "service.yaml"
            raise DashboardLoginError(
                f"no user can log in to the dashboard: the job service config ({where}) "
                "lists no tokens. Give --state/--service-config naming a config with "
                "'tokens' (and a 'teams_file' with viewers), or pass --local to serve it "
                "without login on 127.0.0.1 (one laptop)."
            )


def door_settings() -> dict:
    """The Jupyter server settings that put dashboards behind the job service's door:
    token logins, the viewers' authorizer and kernel channels, Voila's server extension
    (its prelaunch hook is set by :func:`config_source`)."""
    return {
        "ServerApp": {
            "identity_provider_class": "workbench.server.login.TokenLogin",
            "authorizer_class": "workbench.server.authorizer.WorkbenchAuthorizer",
            "kernel_websocket_connection_class": (
                "workbench.server.viewer_channels.ViewerChannels"
            ),
            "jpserver_extensions": {"voila.server_extension": True, "workbench.server": True},
            "extra_template_paths": [str(TEMPLATES)],
            # Voila's page would load MathJax from a CDN (the dashboard has no maths): off,
            # as standalone Voila has it
            "tornado_settings": {"mathjax_url": None, "mathjax_config": None},
        },
        "VoilaConfiguration": voila_settings(),
    }


def server_settings(login: Login, port: int, root: Path) -> dict:
    """:func:`door_settings` for ``workbench dashboard``'s own server: ``login``'s address
    and state, the private root, the dashboard as the default page, no JupyterLab and no
    terminals."""
    settings = door_settings()
    settings["ServerApp"] |= {
        "ip": login.ip,
        "port": port,
        "port_retries": 0,
        "open_browser": False,
        "root_dir": str(root),
        "default_url": "/" + DASHBOARD_URL,
        "terminals_enabled": False,
        "allow_root": os.getuid() == 0,  # as standalone Voila (containers run as root)
    }
    settings["ServerApp"]["jpserver_extensions"] |= {"jupyterlab": False, "notebook": False}
    settings["WorkbenchService"] = {
        "state_dir": str(login.state or ""),
        "config_file": str(login.service_config or ""),
        "supervise": False,  # the dashboard only reads the teams and tokens
    }
    return settings


def config_source(settings: dict) -> str:
    """A Jupyter server's Python config file holding ``settings`` and Voila's prelaunch
    hook (a function, which a JSON config cannot hold)."""
    return (
        '"""workbench dashboard: dashboards behind the job service\'s login."""\n'
        "from workbench.dashboard.voila_hooks import prelaunch\n\n"
        f"c.merge(type(c)({pprint.pformat(settings)}))  # noqa: F821\n"
        "c.VoilaConfiguration.prelaunch_hook = prelaunch  # noqa: F821\n"
    )


#: Lab extensions Voila must not load on the dashboard page: ours needs JupyterLab's shell.
HIDDEN_LAB_EXTENSIONS = ["@dagger-workbench/lab"]


def voila_settings() -> dict:
    """Voila as ``--local`` runs it (the workbench template, code and tracebacks hidden),
    and no ``?template=`` / ``?theme=`` from the URL."""
    return {
        "template": "workbench",
        "strip_sources": True,
        "show_tracebacks": False,
        "theme": "light",
        "allow_template_override": "NO",
        "allow_theme_override": "NO",
        "extension_denylist": HIDDEN_LAB_EXTENSIONS,
    }


def prepare(private: Path, login: Login, port: int, notebook: Path) -> list[str]:
    """Write the server's root (the dashboard notebook) and config into ``private``; the
    command that starts the server."""
    root = private / "root"
    root.mkdir(mode=0o700)
    shutil.copyfile(notebook, root / DASHBOARD)
    config = private / CONFIG_FILE
    config.write_text(config_source(server_settings(login, port, root)), encoding="utf-8")
    return [sys.executable, "-m", "jupyter_server", f"--config={config}"]
