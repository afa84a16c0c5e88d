"""A real JupyterLab for the UI tests: ``jupyter server`` with the job service extension,
JupyterLab and the built lab extension (``workbench/labextension``, loaded from an extra
labextensions folder, as an installed wheel's ``share/jupyter/labextensions`` would be),
users named by their tokens (alice: pricing, bob: supply, root: admin)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from servekit import TOKENS, write_state
from test_extension import Jupyter, start_jupyter

ROOT = Path(__file__).resolve().parents[2]
#: the build's output (``jlpm build:prod`` in extensions/dagger-workbench)
LABEXT = ROOT / "workbench" / "labextension"
#: screenshots of the UI tests
ARTIFACTS = ROOT / "artifacts" / "lab"


def labextensions(folder: Path) -> Path:
    """A labextensions folder holding the built extension (fails with what to run if it
    was not built)."""
    if not (LABEXT / "package.json").is_file():
        pytest.fail(
            "the lab extension is not built: run `jlpm install && jlpm build:prod` in "
            "extensions/dagger-workbench (it writes workbench/labextension)"
        )
    (folder / "@dagger-workbench").mkdir(parents=True, exist_ok=True)
    link = folder / "@dagger-workbench" / "lab"
    if not link.exists():
        link.symlink_to(LABEXT, target_is_directory=True)
    return folder


def start_lab(tmp: Path, *options: str, service: dict | None = None) -> Jupyter:
    """JupyterLab under ``/user/alice/`` whose users log in with their token as an
    ``Authorization`` header (the page config carries no token of its own). JupyterLab's
    news are off (they would ask the user, over the panel). ``service``: more keys of the
    job service's config (``clusters``, ``kafka_clusters``...)."""
    news = tmp / "jupyter-config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    users = [f"--TokenUsers.users={token}={user}" for user, token in TOKENS.items()]
    state = write_state(tmp / "state")
    if service:
        config = state / "service.yaml"
        config.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), **service}))
    return start_jupyter(
        tmp,
        state,
        "--ServerApp.identity_provider_class=token_users.TokenUsers",
        "--TokenUsers.token=",
        f"--LabApp.extra_labextensions_path={labextensions(tmp / 'labextensions')}",
        *users,
        *options,
    )


def as_user(user: str) -> dict:
    return {"Authorization": f"token {TOKENS[user]}"}


def start_viewer_lab(tmp: Path, store: str) -> Jupyter:
    """JupyterLab with the job service and Voila's server extension behind the job
    service's door, as ``workbench dashboard`` sets it up (token logins from the service
    config, the viewers' authorizer and kernel channels, Voila's prelaunch hook), the
    dashboard notebook in its root reading ``store``; users log in with ``?token=``."""
    import os

    from workbench.dashboard.behind_login import config_source, door_settings
    from workbench.dashboard.config import DashboardConfig
    from workbench.dashboard.notebook import render
    from workbench.dashboard.serve import environment
    from workbench.dashboard.viewers import DASHBOARD

    (tmp / DASHBOARD).write_text(render())
    private = tmp / "private"
    private.mkdir(mode=0o700)
    door = private / "door_config.py"
    door.write_text(config_source(door_settings()))
    kernels = environment(DashboardConfig.load(store=store, refresh_seconds=600), private)
    changed = {k: kernels[k] for k in ("JUPYTER_PATH", "WORKBENCH_DASHBOARD_CONFIG")}
    saved = {k: os.environ.get(k) for k in changed}
    os.environ.update(changed)
    try:
        return start_jupyter(tmp, write_state(tmp / "state"), f"--config={door}")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
