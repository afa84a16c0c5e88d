"""JobService on the database (no supervisor): submit, versions, checkpoints, authz, events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobkit import SQL, spec_yaml, teams_file

from workbench.exceptions import (
    JobConflictError,
    JobForbiddenError,
    JobNotFoundError,
    JobServiceError,
    SpecError,
    TeamNotFoundError,
)
from workbench.jobs import versioning
from workbench.jobs.metrics import KEYS as METRIC_KEYS
from workbench.streaming.checkpoints import QUERY

pytestmark = pytest.mark.unit


@pytest.fixture
def service(make_service, tmp_path):
    return make_service(teams=teams_file(tmp_path))


def test_submit_makes_version_1_to_be_running(service, tmp_path):
    bob = service.principal("bob")
    job = service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), note="first")
    assert job["name"] == "surge" and job["team"] == "pricing" and job["version"] == 1
    assert (job["status"], job["desired"], job["cluster"]) == ("SUBMITTED", "running", "local")
    assert job["created_by"] == "bob" and job["run"] is None and job["last_error"] is None
    assert job["checkpoint"] == str(tmp_path / "state" / "checkpoints" / "surge" / "v1")
    assert set(job["metrics"]) == set(METRIC_KEYS)
    assert service.get_job(bob, job["id"]) == service.get_job(bob, "surge")
    assert service.get_job(bob, str(job["id"]))["name"] == "surge"
    [event] = service.events(bob, "surge")
    assert (event["actor"], event["action"], event["detail"]) == (
        "bob", "submit", {"version": 1, "note": "first"}
    )  # fmt: skip


def test_specs_are_kept_as_written_with_secret_references(service):
    bob = service.principal("bob")
    text = spec_yaml()
    service.submit(bob, name="surge", team="pricing", spec_yaml=text)
    [version] = service.versions(bob, "surge")
    assert version["spec_yaml"] == text and "${env:WB_TEST_JAAS}" in version["spec_yaml"]
    assert version["current"] and version["author"] == "bob" and version["parity"] is None


def test_a_bad_spec_is_refused_before_anything_is_stored(service):
    bob = service.principal("bob")
    with pytest.raises(SpecError, match="sql") as err:
        service.submit(bob, name="surge", team="pricing", spec_yaml="name: surge\nstreams: []\n")
    assert not hasattr(err.value, "status") or err.value.status == 400
    with pytest.raises(SpecError, match="not valid YAML"):
        service.submit(bob, name="surge", team="pricing", spec_yaml="a: [")
    assert service.list_jobs(bob) == []


def test_edits_keep_the_checkpoint_when_the_shape_is_unchanged(service, tmp_path):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    same = service.edit(bob, "surge", spec_yaml(trigger_interval="5s"), note="faster")
    assert same["version"] == 2
    assert same["checkpoint"] == str(tmp_path / "state" / "checkpoints" / "surge" / "v1")
    new = service.edit(bob, "surge", spec_yaml(sql=SQL + " WHERE 1 = 1"))
    assert new["version"] == 3
    assert new["checkpoint"] == str(tmp_path / "state" / "checkpoints" / "surge" / "v3")
    versions = service.versions(bob, "surge")
    assert [v["number"] for v in versions] == [1, 2, 3]
    assert [v["current"] for v in versions] == [False, False, True]
    assert versions[1]["note"] == "faster"
    # v1's checkpoint never committed a batch, so v3 has nothing to continue
    assert versions[2]["continues_from"] is None
    assert [e["action"] for e in service.events(bob, "surge")] == ["submit", "edit", "edit"]


def test_a_new_checkpoint_continues_the_committed_one_with_a_handoff(service, monkeypatch):
    bob = service.principal("bob")
    job = service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    commits = Path(job["checkpoint"]) / QUERY / "commits"  # where Spark commits, as in a run
    commits.mkdir(parents=True)
    (commits / "0").write_text("v1")
    service.edit(bob, "surge", spec_yaml(sql=SQL + " WHERE 1 = 1"))
    seen = []

    def planner(old, old_spec, new_spec):
        seen.append((old, old_spec.sql, new_spec.sql))
        return {"starting_offsets": {"booking": {"bookings": {"0": 7}}}, "min_rowtime": None}

    monkeypatch.setattr(versioning, "planner", planner)
    with service.db.session() as s:
        current = versioning.version(s, job["id"], 2)
        assert current.continues_from == 1
        plan = versioning.plan_handoff(s, current)
        assert versioning.plan_handoff(s, current) == plan  # computed once, then stored
    assert seen == [(Path(job["checkpoint"]), SQL, SQL + " WHERE 1 = 1")]
    assert service.versions(bob, "surge")[1]["handoff"]["starting_offsets"]["booking"]


def test_rollback_makes_an_old_spec_current_as_a_new_version(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    service.edit(bob, "surge", spec_yaml(sql=SQL + " WHERE 1 = 1"))
    job = service.rollback(bob, "surge", 1)
    assert job["version"] == 3
    v1, _, v3 = service.versions(bob, "surge")
    assert v3["spec_yaml"] == v1["spec_yaml"] and v3["note"] == "rollback to v1"
    assert v3["checkpoint"].endswith("/v3")  # the state layout differs from v2's
    with pytest.raises(JobConflictError):
        service.rollback(bob, "surge", 3)
    with pytest.raises(JobServiceError, match=r"no version 9; its versions: \[1, 2, 3\]"):
        service.rollback(bob, "surge", 9)
    assert service.events(bob, "surge")[-1]["detail"] == {"to": 1, "version": 3}


def test_submitting_an_existing_name_is_an_edit_with_its_notebook(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), notebook=b"{}")
    job = service.submit(
        bob, name="surge", team="pricing", spec_yaml=spec_yaml(), notebook=b'{"cells": []}',
        parity={"equal": True, "rows": 12},
    )  # fmt: skip
    assert job["version"] == 2
    v1, v2 = service.versions(bob, "surge")
    assert v2["parity"] == {"equal": True, "rows": 12} and v2["notebook_sha256"]
    assert service.notebook(bob, "surge", 2) == b'{"cells": []}'
    assert service.notebook(bob, "surge", 1) == b"{}"
    with pytest.raises(JobConflictError, match="belongs to team 'pricing'"):
        service.submit(
            service.principal("root"), name="surge", team="supply", spec_yaml=spec_yaml()
        )


def test_other_teams_get_404_on_reads_and_actions(service):
    bob, dave = service.principal("bob"), service.principal("dave")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    service.submit(dave, name="supply-1", team="supply", spec_yaml=spec_yaml(name="supply-1"))
    assert [j["name"] for j in service.list_jobs(bob)] == ["surge"]
    assert [j["name"] for j in service.list_jobs(dave)] == ["supply-1"]
    assert [j["name"] for j in service.list_jobs(service.principal("root"))] == [
        "surge",
        "supply-1",
    ]
    assert service.list_jobs(service.principal("root"), team="supply")[0]["name"] == "supply-1"
    for read in (service.get_job, service.versions, service.events, service.logs):
        with pytest.raises(JobNotFoundError):
            read(dave, "surge")
    hidden = str(pytest.raises(JobNotFoundError, service.get_job, dave, "surge").value)
    for act in (service.stop, service.start, service.restart):  # as a read: the same 404
        with pytest.raises(JobNotFoundError) as found:
            act(dave, "surge")
        assert str(found.value) == hidden and "pricing" not in hidden
        assert found.value.denied.startswith(f"{act.__name__} job 'surge' of team 'pricing'")
    with pytest.raises(JobNotFoundError, match="No job 'surge' that you can see"):
        service.edit(dave, "surge", spec_yaml())
    with pytest.raises(JobNotFoundError, match="No job 'surge' that you can see"):
        service.rollback(dave, "surge", 1)
    with pytest.raises(JobForbiddenError, match="submit a job for team 'pricing'"):
        service.submit(dave, name="x", team="pricing", spec_yaml=spec_yaml())
    with pytest.raises(TeamNotFoundError, match="^no team 'pricng'; your teams: supply.$"):
        service.submit(dave, name="x", team="pricng", spec_yaml=spec_yaml())
    with pytest.raises(JobConflictError, match="taken by a job of another team"):
        service.submit(dave, name="surge", team="supply", spec_yaml=spec_yaml())
    with pytest.raises(JobNotFoundError):
        service.get_job(bob, "nope")
    with pytest.raises(JobNotFoundError):  # an id past the database's integers
        service.get_job(bob, "99999999999999999999")
    assert service.stop(service.principal("root"), "surge")["desired"] == "stopped"


def test_actions_set_the_desired_state_and_are_events(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    assert service.stop(bob, "surge")["desired"] == "stopped"
    assert service.start(bob, "surge")["desired"] == "running"
    service.restart(bob, "surge")
    with service.db.session() as s:
        from workbench.jobs.db import Job

        assert s.get(Job, 1).restart_token == 1
    actions = [(e["actor"], e["action"]) for e in service.events(bob, "surge")]
    assert actions == [("bob", a) for a in ("submit", "stop", "start", "restart")]
    assert [e["action"] for e in service.events(bob, "surge", last=2)] == ["start", "restart"]


def test_logs_and_progress_without_runs_are_empty(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    assert service.logs(bob, "surge")["text"] == "" and service.progress(bob, "surge") == []
    with pytest.raises(JobNotFoundError):
        service.logs(bob, "surge", run="1-9")


def test_unknown_cluster_and_bad_names_are_refused(service):
    bob = service.principal("bob")
    with pytest.raises(JobServiceError, match="Unknown cluster 'big'"):
        service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), cluster="big")
    with pytest.raises(JobServiceError, match="not a job name"):
        service.submit(bob, name="../x", team="pricing", spec_yaml=spec_yaml())


def test_single_user_mode_everyone_is_admin(make_service):
    service = make_service()
    me = service.principal(None)
    job = service.submit(me, name="surge", team="default", spec_yaml=spec_yaml())
    assert service.list_jobs(service.principal("someone"))[0]["id"] == job["id"]


def test_the_record_is_kept_under_the_state_folder(service, tmp_path):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), notebook=b"nb")
    path = tmp_path / "state" / "records" / "surge" / "v1.ipynb"
    assert path.read_bytes() == b"nb"
    import hashlib

    assert service.versions(bob, "surge")[0]["notebook_sha256"] == hashlib.sha256(b"nb").hexdigest()
    assert json.dumps(service.get_job(bob, "surge"))  # JSON-able


def test_simultaneous_submissions_of_one_name_make_one_job(service):
    from concurrent.futures import ThreadPoolExecutor

    bob = service.principal("bob")

    def submit(i):
        try:
            return service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
        except JobConflictError as err:
            return err

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(submit, range(4)))
    jobs = [r for r in results if isinstance(r, dict)]
    assert jobs and all(isinstance(r, (dict, JobConflictError)) for r in results)
    assert len(service.list_jobs(bob)) == 1
    numbers = [v["number"] for v in service.versions(bob, "surge")]
    assert numbers == list(range(1, len(jobs) + 1))
