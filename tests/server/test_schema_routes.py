"""Schema versions over HTTP (:mod:`workbench.server.schema_routes`) and ``workbench
schemas publish | versions --server`` against a real ``workbench serve`` (its own
``$WORKBENCH_HOME``): the caller is the author, a breaking set is refused with the list
unless an admin allows it (kept in the version's record), viewers and strangers get
nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cli_runner import workbench
from servekit import TOKENS, start_serve, write_state

from workbench.schemas import sets

COMPAT = Path(__file__).resolve().parents[1] / "fixtures" / "schemas" / "compat"
OLD, NEW = (COMPAT / "field_type_changed" / side for side in ("old", "new"))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("schema-routes")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("WORKBENCH_HOME", str(base / "home"))  # the server's schema store
        server = start_serve(write_state(base / "state"))
    yield server
    assert server.stop() == 0


def encoded(folder: Path) -> str:
    files = sets.compiled(folder).SerializeToString(deterministic=True)
    return base64.b64encode(files).decode("ascii")


def publish(served, user, folder, **extra):
    body = {"descriptor_set": encoded(folder), "source": folder.name, **extra}
    return served.call("POST", "schemas/versions", user, body)


def test_publish_and_list_over_http(served):
    first = publish(served, "alice", OLD, note="first")
    assert first.status_code == 201, first.text
    version = first.json()
    assert (version["number"], version["author"], version["note"]) == (1, "alice", "first")
    assert version["messages"] == ["compat.Order"] and version["new"] is True
    again = publish(served, "bob", OLD)
    assert again.status_code == 200 and again.json()["new"] is False

    listed = served.call("GET", "schemas/versions", "bob").json()["versions"]
    assert [(v["number"], v["author"], v["messages"]) for v in listed] == [
        (1, "alice", ["compat.Order"])
    ]
    assert served.call("GET", "schemas/versions", None).status_code == 401
    assert served.call("GET", "schemas/versions", "carla").status_code == 403  # a viewer
    bad = served.call("POST", "schemas/versions", "alice", {"descriptor_set": "%%"})
    assert bad.status_code == 400 and "base64" in bad.json()["error"]["message"]


def test_a_breaking_set_is_refused_unless_an_admin_allows_it(served):
    refused = publish(served, "alice", NEW)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["type"] == "SchemaPublishError" and "--allow-breaking" in error["message"]
    [change] = error["changes"]
    assert (change["kind"], change["line"]) == ("field-type-changed", 6)
    assert publish(served, "alice", NEW, allow_breaking=True).status_code == 403

    allowed = publish(served, "root", NEW, allow_breaking=True)
    assert allowed.status_code == 201, allowed.text
    [line] = allowed.json()["breaking"]
    assert "shop.proto:6: field-type-changed" in line


def test_the_cli_talks_to_the_server_when_given_one(served, tmp_path):
    auth = ("--server", served.url, "--token", TOKENS["alice"])
    refused = workbench("schemas", "publish", OLD, *auth, timeout=120)  # breaks the latest
    assert refused.returncode == 1 and "field-type-changed" in refused.stderr, refused.stderr
    listed = workbench("schemas", "versions", "--json", *auth, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["number"], bool(r["breaking"])) for r in rows][-1] == (2, True)
    table = workbench("schemas", "versions", *auth, timeout=120).stdout
    assert "(breaking allowed)" in table and "alice" in table
