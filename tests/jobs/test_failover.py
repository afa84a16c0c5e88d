"""Kafka failover in the job service, without Kafka: which streams move, the new version
and its pending plan, the plan from recorded Spark logs and MM2 translations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jobkit import spec_yaml
from streaming import surge_spec
from test_handoff import _write_log

from workbench.exceptions import (
    JobNotFoundError,
    JobServiceError,
    KafkaClusterNotFoundError,
)
from workbench.jobs import failover, handoff, versioning
from workbench.jobs.config import KafkaCluster
from workbench.jobs.db import Job

pytestmark = pytest.mark.unit

CLUSTERS = {
    "main": KafkaCluster(bootstrap_servers="127.0.0.1:1", standby="mirror"),
    "mirror": KafkaCluster(bootstrap_servers="127.0.0.1:2"),
    "other": KafkaCluster(bootstrap_servers="127.0.0.1:3"),
}


def two_streams(first: str, second: str) -> str:
    data = yaml.safe_load(spec_yaml())
    extra = {**data["streams"][0], "table": "payment", "cluster": second, "topics": ["p"]}
    data["streams"][0]["cluster"] = first
    data["streams"].append(extra)
    data["sql"] = "SELECT * FROM booking"
    return yaml.safe_dump(data, sort_keys=False)


def clusters_of(text: str) -> list[str]:
    return [s["cluster"] for s in yaml.safe_load(text)["streams"]]


def test_the_streams_of_the_cluster_the_mirror_stands_by_for_move():
    moved, names = failover.failover_spec(two_streams("main", "other"), CLUSTERS, "mirror")
    assert clusters_of(moved) == ["mirror", "other"] and names == ["main"]
    # no standby named, but one cluster only: a migration moves it all
    moved, names = failover.failover_spec(two_streams("other", "other"), CLUSTERS, "mirror")
    assert clusters_of(moved) == ["mirror", "mirror"] and names == ["other"]
    with pytest.raises(JobServiceError, match="none of those names 'other' as its standby"):
        failover.failover_spec(two_streams("main", "mirror"), CLUSTERS, "other")


def test_the_plan_translates_the_moved_tables_and_keeps_the_floor(tmp_path):
    spec = surge_spec("127.0.0.1:1", "t", tmp_path, [])  # TUMBLE 1 minute, delay 10 s
    ends = [{"t": {"0": 10 * (n + 1), "1": 20 * (n + 1)}} for n in range(4)]
    marks = [(0, 100_000), (100_000, 125_000), (125_000, 150_000), (150_000, 170_000)]
    batches = [(wm, nxt, end) for (wm, nxt), end in zip(marks, ends, strict=True)]
    _write_log(tmp_path / "ck", batches, {"t": {"0": 0, "1": 0}})
    base = handoff.plan(tmp_path / "ck", spec, spec)  # t: {0: 10, 1: 20} from 2:00
    translated = {"t": {"0": 7}}  # MM2 rounds down; partition 1 has no translation

    plan = failover.plan_from(tmp_path / "ck", spec, translated, {"booking"})
    assert plan == {
        "starting_offsets": {"booking": {"t": {"0": 7, "1": failover.EARLIEST}}},
        "min_rowtime": base["min_rowtime"],
    }
    assert failover.plan_from(tmp_path / "ck", spec, translated, set()) == base
    # nothing translated: from the last watermark (2:30) minus one window (1 minute)
    nothing = failover.plan_from(tmp_path / "ck", spec, {}, {"booking"})
    assert nothing == {"starting_offsets": {"booking": 90_000}, "min_rowtime": base["min_rowtime"]}


def test_failover_adds_a_version_on_the_mirror_with_a_new_checkpoint(make_service):
    service = make_service(kafka_clusters=CLUSTERS)
    bob = service.principal("bob")
    text = two_streams("main", "other")
    first = service.submit(bob, name="surge", team="pricing", spec_yaml=text)
    committed = [(0, 1, {"bookings": {"0": 5}})]  # v1 committed a batch: v2 continues it
    _write_log(Path(first["checkpoint"]), committed, {"bookings": {"0": 0}})

    job = service.failover(bob, "surge", "mirror", reason="main is down")

    assert job["version"] == 2 and job["checkpoint"] != first["checkpoint"]
    [v1, v2] = service.versions(bob, "surge")
    assert (
        clusters_of(v2["spec_yaml"]) == ["mirror", "other"]
        and v2["note"] == "failover main -> mirror"
    )
    with service.db.session() as s:
        version = versioning.version(s, job["id"], 2)
        assert version.continues_from == 1
        assert json.loads(version.handoff_json) == {
            "failover": {"job": "surge", "from": ["main"], "to": "mirror"}
        }
    [event] = [e for e in service.events(bob, "surge") if e["action"] == "failed over"]
    assert event["actor"] == "bob"
    assert event["detail"] == {
        "version": 2,
        "to": "mirror",
        "moved": ["main"],
        "why": "main is down",
    }
    with pytest.raises(KafkaClusterNotFoundError, match="Did you mean mirror"):
        service.failover(bob, "surge", "miror")


def test_another_team_may_not_fail_a_job_over(make_service, tmp_path):
    from jobkit import teams_file

    service = make_service(teams=teams_file(tmp_path), kafka_clusters=CLUSTERS)
    service.submit(
        service.principal("bob"),
        name="surge",
        team="pricing",
        spec_yaml=two_streams("main", "main"),
    )
    with pytest.raises(JobNotFoundError, match="No job 'surge' that you can see") as refused:
        service.failover(service.principal("dave"), "surge", "mirror")
    assert "pricing" not in str(refused.value)  # the owner team is not named
    assert "fail over" in refused.value.denied  # the audit trail keeps what was refused


def test_a_pending_failover_of_a_job_that_never_committed_starts_fresh(make_service):
    service = make_service(kafka_clusters=CLUSTERS)
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=two_streams("main", "main"))
    service.failover(bob, "surge", "mirror")
    with service.db.session() as s:
        job = s.query(Job).filter_by(name="surge").one()
        version = versioning.version(s, job.id, 2)
        assert failover.plan_handoff(s, version, service.config) is None
        assert version.handoff_json == "{}"  # the spec's own starting offsets, for good
        assert failover.plan_handoff(s, version, service.config) == {}
        first = versioning.version(s, job.id, 1)
        assert failover.plan_handoff(s, first, service.config) is None  # not a failover
