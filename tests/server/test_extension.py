"""The job service inside a real ``jupyter server`` process: routes under its base_url,
Jupyter's authentication, and Jupyter's user as the caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from polling import wait_for
from servekit import TOKENS, write_state

from workbench.client.rest import ServiceClient
from workbench.dev.ports import free_port
from workbench.server.identity import local_user

pytestmark = pytest.mark.unit

HERE = Path(__file__).resolve().parent
#: The config shipped in the wheel (etc/jupyter/...): it alone enables the extension here.
SHIPPED = HERE.parent.parent / "jupyter-config"


class Jupyter:
    def __init__(self, url: str, process: subprocess.Popen):
        self.url, self.process = url, process

    def call(self, method, path, token=None, body=None, base=None):
        headers = {"Authorization": f"token {token}"} if token else {}
        url = (base or self.url) + "workbench/api/" + path
        return requests.request(method, url, headers=headers, json=body, timeout=30)


def start_jupyter(tmp: Path, state: Path, *options: str) -> Jupyter:
    port = free_port()
    config = tmp / "jupyter-config"
    config.mkdir(exist_ok=True)
    env = os.environ | {
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTER_CONFIG_PATH": str(SHIPPED),
        "WORKBENCH_SERVICE_STATE": str(state),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [
        sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.root_dir={tmp}",
        "--ServerApp.base_url=/user/alice/",
        *(["--allow-root"] if os.getuid() == 0 else []), *options,
    ]  # fmt: skip
    log = open(tmp / "jupyter.log", "ab")  # noqa: SIM115 (the process keeps it)
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)  # fmt: skip
    server = Jupyter(f"http://127.0.0.1:{port}/user/alice/", process)

    def up() -> bool:
        assert process.poll() is None, (tmp / "jupyter.log").read_text()[-3000:]
        try:
            return requests.get(server.url + "api/status", timeout=2).status_code in (200, 403)
        except requests.ConnectionError:
            return False

    wait_for(up, 90, "jupyter server to answer")
    return server


def stop_jupyter(server: Jupyter) -> None:
    os.killpg(server.process.pid, signal.SIGTERM)
    server.process.wait(30)


@pytest.fixture
def plain_jupyter(tmp_path):
    """Jupyter's own token login (one shared token): the caller is the server's owner."""
    server = start_jupyter(
        tmp_path, write_state(tmp_path / "state"), "--IdentityProvider.token=t0k"
    )
    yield server
    stop_jupyter(server)


def start_hub_like(tmp: Path, state: Path) -> Jupyter:
    """Jupyter with an identity provider naming users (as JupyterHub's): teams apply."""
    users = [f"--TokenUsers.users={token}={user}" for user, token in TOKENS.items()]
    return start_jupyter(
        tmp, state, "--ServerApp.identity_provider_class=token_users.TokenUsers", *users
    )


@pytest.fixture
def hub_like_jupyter(tmp_path):
    server = start_hub_like(tmp_path, write_state(tmp_path / "state"))
    yield server
    stop_jupyter(server)


@pytest.mark.lab
def test_mounted_under_base_url_with_jupyter_token(plain_jupyter):
    me = plain_jupyter.call("GET", "me", "t0k")
    assert me.status_code == 200, me.text
    assert me.json() == {"user": local_user(), "teams": [], "admin": True}
    assert plain_jupyter.call("GET", "jobs", "t0k").json() == {"jobs": []}
    client = ServiceClient(plain_jupyter.url, "t0k")  # the CLI's --server URL --token T
    assert client.me()["user"] == local_user() and client.list_jobs() == []
    root = plain_jupyter.url.replace("/user/alice/", "/")
    assert plain_jupyter.call("GET", "me", "t0k", base=root).status_code == 404


@pytest.mark.lab
def test_jupyter_refuses_without_its_token(plain_jupyter):
    for token in (None, "wrong"):
        answer = plain_jupyter.call("GET", "jobs", token)
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"]["status"] == 403


def test_jupyter_users_and_teams(hub_like_jupyter, surge_yaml):
    jupyter = hub_like_jupyter
    assert jupyter.call("GET", "me", TOKENS["alice"]).json()["user"] == "alice"
    body = {"name": "lab-surge", "team": "pricing", "spec_yaml": surge_yaml}
    created = jupyter.call("POST", "jobs", TOKENS["alice"], body)
    assert created.status_code == 201, created.text
    try:
        names = [j["name"] for j in jupyter.call("GET", "jobs", TOKENS["root"]).json()["jobs"]]
        assert names == ["lab-surge"]
        assert jupyter.call("GET", "jobs", TOKENS["bob"]).json() == {"jobs": []}
        missing = jupyter.call("GET", "jobs/lab-surge", TOKENS["bob"])
        assert (
            missing.status_code == 404 and "that you can see" in missing.json()["error"]["message"]
        )
        refused = jupyter.call("POST", "jobs/lab-surge/stop", TOKENS["bob"])  # as a read
        assert (refused.status_code, refused.text) == (404, missing.text)
    finally:
        assert jupyter.call("POST", "jobs/lab-surge/stop", TOKENS["alice"]).status_code == 200
        wait_for(
            lambda: (
                jupyter.call("GET", "jobs/lab-surge", TOKENS["alice"]).json()["status"]
                in ("STOPPED", "FAILED")
            ),
            60,
            "lab-surge to stop",
        )
