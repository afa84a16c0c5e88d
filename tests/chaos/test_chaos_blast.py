"""Blast radius: a team's or a cluster's jobs that should be running, from the job
service's views (the e2e test resolves both through the real service)."""

from __future__ import annotations

import pytest

from workbench.chaos.blast import pick, resolve
from workbench.exceptions import ChaosError

pytestmark = pytest.mark.unit

JOBS = [
    {"id": 1, "team": "pricing", "cluster": "local", "desired": "running"},
    {"id": 2, "team": "pricing", "cluster": "spark-a", "desired": "running"},
    {"id": 3, "team": "pricing", "cluster": "local", "desired": "stopped"},
    {"id": 4, "team": "supply", "cluster": "local", "desired": "running"},
]


def test_team_and_cluster_resolve_to_their_running_jobs():
    assert pick(JOBS, "job", "surge") == ["surge"]
    assert pick(JOBS, "team", "surge", team="pricing") == ["1", "2"]
    assert pick(JOBS, "cluster", None, cluster="local") == ["1", "4"]


@pytest.mark.parametrize(
    ("radius", "team", "cluster", "says"),
    [
        ("team", None, None, "needs the scenario's 'team'"),
        ("cluster", None, None, "needs the case's 'cluster'"),
        ("team", "ops", None, "No job of the team 'ops'"),
        ("cluster", None, "spark-b", "No job of the cluster 'spark-b'"),
    ],
)
def test_an_empty_or_unnamed_radius_says_what_to_give(radius, team, cluster, says):
    with pytest.raises(ChaosError, match=says):
        pick(JOBS, radius, None, team, cluster)


def test_a_team_radius_needs_the_job_service():
    with pytest.raises(ChaosError, match="--server and --token"):
        resolve(None, "team", None, team="pricing")
