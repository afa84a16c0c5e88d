"""``workbench jobs move`` as the service does it: checks, the event, and the supervisor
starting the job on the other cluster from the same checkpoint (stand-in job program)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobkit import running_run, spec_yaml, teams_file

from workbench.exceptions import JobNotFoundError, JobServiceError

pytestmark = pytest.mark.unit

CLUSTERS = {
    "blue": {"master": "local[2]"},
    "green": {"master": "local[1]", "resources": {"shuffle_partitions": 3}},
    "supply-only": {"master": "local[1]", "teams": ["supply"]},
}
FAST = {"backoff_s": 0.2, "stop_grace_s": 5, "kill_grace_s": 5}


@pytest.fixture
def service(make_service, tmp_path):
    teams = teams_file(tmp_path)
    service = make_service(teams, clusters=CLUSTERS, tick_s=0.1, heartbeat_s=0.2, policy=FAST)
    assert service.start_supervisor()
    return service


def test_a_move_stops_the_run_and_starts_one_on_the_cluster_from_the_checkpoint(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    first = running_run(service, bob, "surge")
    assert first["cluster"] == "blue"

    job = service.move(service.principal("carol"), "surge", "green")
    assert job["cluster"] == "green"
    moved = running_run(service, bob, "surge", other_than=first)
    run = json.loads((Path(service.config.state_dir) / "runs" / moved["run"]["id"] / "run.json")
                     .read_text())  # fmt: skip
    assert run["cluster"] == "green" and run["spark_master"] == "local[1]"
    assert run["spark_conf"] == {"spark.sql.shuffle.partitions": "3"}
    assert run["checkpoint"] == first["checkpoint"] == moved["checkpoint"]
    events = service.events(bob, "surge", last=100)
    [move] = [e for e in events if e["action"] == "moved"]
    assert move["actor"] == "carol" and move["detail"] == {
        "from": "blue", "to": "green", "why": "asked",
    }  # fmt: skip
    actions = [e["action"] for e in events]
    assert "stop-requested" in actions and "run-failed" not in actions  # a graceful stop


def test_moves_that_are_refused_say_why(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    with pytest.raises(JobServiceError, match="runs on cluster 'blue' already"):
        service.move(bob, "surge", "blue")
    with pytest.raises(JobServiceError, match=r"may not run jobs on cluster 'supply-only'"):
        service.move(bob, "surge", "supply-only")
    with pytest.raises(JobServiceError, match="Unknown cluster 'gren'. Did you mean green"):
        service.move(bob, "surge", "gren")
    with pytest.raises(JobNotFoundError):  # another team's job: as a read
        service.move(service.principal("dave"), "surge", "green")
    root = service.principal("root")  # an admin may use any cluster
    assert service.move(root, "surge", "supply-only")["cluster"] == "supply-only"
