"""Schema pins end to end (``workbench serve`` in its own process, the session broker, a
real Spark run): a job submitted after ``workbench schemas publish`` (over HTTP) runs on
that version; newer versions (a renamed field, then a type change an admin had to allow)
leave it running on its pin; an edit asking for the renamed version is refused because
its SQL names the old field (CLI exit 1), one asking for the incompatible version with
the list (HTTP 400), and so is a resubmit (it pins the latest); an edit without one keeps
the pin, and its new run decodes with the pinned descriptors (the customer ids the later
versions would not read as text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from jobkit import batches, running
from polling import wait_for
from service_process import Service
from streaming import new_topic, publish_events

from workbench.schemas.registry import BUNDLED_PROTOS

BOOKING = "esb/booking.proto"
BROKEN = ("  string customer_id = 5;", "  int64 customer_id = 5;")
RENAMED = ("  string customer_id = 5;", "  string customer_ref = 5;")


@pytest.fixture(scope="module")
def service(tmp_path_factory, kafka_broker):
    base = tmp_path_factory.mktemp("pins")
    service = Service(base / "state", base / "home").start()
    yield service
    service.close()


def schema_folder(base: Path, name: str, change: tuple[str, str] | None) -> Path:
    folder = base / name
    shutil.copytree(BUNDLED_PROTOS, folder)
    if change:
        path = folder / BOOKING
        text = path.read_text()
        assert change[0] in text
        path.write_text(text.replace(*change))
    return folder


def spec(bootstrap: str, topic: str, out: Path) -> str:
    return yaml.safe_dump({
        "name": "pinned-e2e",
        "streams": [{
            "table": "booking", "message": "esb.booking.BookingLogMessage",
            "bootstrap_servers": bootstrap, "topics": [topic], "starting_offsets": "earliest",
        }],
        "sql": "SELECT order_number, customer_id FROM booking",
        "trigger_interval": "2s",
        "sinks": [{"type": "log"}],
        "dead_letter": {"type": "parquet", "path": str(out / "dead-letters")},
    }, sort_keys=False)  # fmt: skip


def test_a_job_keeps_running_on_its_pinned_schema_version(service, kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "pins")
    publish_events(bootstrap, topic, 200, seed=5)
    good = service.cli("alice", "schemas", "publish", schema_folder(tmp_path, "v1", None),
                       "--note", "as shipped")  # fmt: skip
    assert "published schema version 1" in good.stdout, good.stderr

    text = spec(bootstrap, topic, tmp_path)
    body = {"name": "pinned-e2e", "team": "pricing", "spec_yaml": text}
    assert service.api("alice", "POST", "/jobs", body).status_code == 201
    job = service.wait_for("pinned-e2e", lambda j: running(j) and batches(j) > 0, 300, "batches")
    run = job["run"]["id"]
    config = json.loads((service.state / "runs" / run / "run.json").read_text())
    assert config["schema_version"] == 1 and config["schema_set"].endswith("v1.desc")

    renamed = service.cli("alice", "schemas", "publish", schema_folder(tmp_path, "v2", RENAMED))
    assert "published schema version 2" in renamed.stdout, renamed.stderr
    broken = ("schemas", "publish", schema_folder(tmp_path, "v3", BROKEN), "--allow-breaking")
    allowed = service.cli("root", *broken)  # an admin's (test_schema_routes: the refusals)
    assert "published schema version 3" in allowed.stdout, allowed.stderr
    versions = service.get("/schemas/versions")["versions"]
    assert [(v["author"], bool(v["breaking"])) for v in versions] == [
        ("alice", False), ("alice", False), ("root", True)
    ]  # fmt: skip

    # the job runs on, on version 1: the same run, more batches over new events
    before = batches(service.job("pinned-e2e"))
    publish_events(bootstrap, topic, 100, seed=6)
    job = service.wait_for("pinned-e2e", lambda j: batches(j) > before, 120, "more batches")
    assert job["run"]["id"] == run and job["status"] == "RUNNING"
    log = service.get("/jobs/pinned-e2e/logs?limit=1000000")["text"]
    assert "on schema version 1" in log

    # version 2 renamed a field the SQL reads: refused, naming it
    spec_file = tmp_path / "pinned.yaml"
    spec_file.write_text(text)
    refused = service.cli("alice", "jobs", "edit", "pinned-e2e", spec_file, "--schema-version", 2)
    assert refused.returncode == 1
    assert "does not fit schema version 2" in refused.stderr, refused.stderr
    assert "Did you mean customer_ref" in refused.stderr

    # version 3 breaks what it reads: refused with the list
    answer = service.api(
        "alice", "PUT", "/jobs/pinned-e2e", {"spec_yaml": text, "schema_version": 3}
    )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "SchemaBreakingError" and "customer_id" in error["message"]
    [change] = error["changes"]
    assert (change["kind"], change["file"], change["line"]) == ("field-type-changed", BOOKING, 49)
    resubmit = service.api("alice", "POST", "/jobs", body)  # pins the latest: 3
    assert resubmit.status_code == 400 and "field-type-changed" in resubmit.text

    # an edit without a schema version keeps the pin; its new run decodes with version 1
    kept = service.cli("alice", "jobs", "edit", "pinned-e2e", spec_file, "--note", "same")
    assert kept.returncode == 0, kept.stderr
    versions = service.get("/jobs/pinned-e2e/versions")["versions"]
    assert [v["schema_version"] for v in versions] == [1, 1]
    job = service.wait_for("pinned-e2e", lambda j: running(j) and j["run"]["id"] != run, 300,
                           "the edited version's run")  # fmt: skip
    publish_events(bootstrap, topic, 50, seed=7)

    def rows_logged() -> str | None:
        path = f"/jobs/pinned-e2e/logs?run={job['run']['id']}&limit=1000000"
        text = service.get(path)["text"]
        return text if "rows" in text and "cust-" in text else None  # ids read as text

    log = wait_for(rows_logged, 120, "the new run's rows")
    assert "v2 on schema version 1" in log
