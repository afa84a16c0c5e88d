"""The clusters as the API shows them: who sees which, secrets in conf masked, job counts."""

from __future__ import annotations

import pytest
from jobkit import spec_yaml, teams_file

from workbench.exceptions import ClusterNotFoundError

pytestmark = pytest.mark.unit

CLUSTERS = {
    "shared": {"master": "local[2]", "description": "for everyone"},
    "pricing-a": {
        "master": "spark://127.0.0.1:1",
        "teams": ["pricing"],
        "standby": "shared",
        "resources": {"cores": 4, "executor_memory": "2g"},
        "conf": {"spark.hadoop.fs.s3a.secret.key": "s3cr3t", "spark.driver.host": "10.0.0.9"},
    },
    "supply-a": {"master": "yarn", "teams": ["supply"]},
}


@pytest.fixture
def service(make_service, tmp_path):
    return make_service(teams_file(tmp_path), clusters=CLUSTERS)


def test_a_team_sees_the_clusters_it_may_use_and_an_admin_all(service):
    bob, dave, root = (service.principal(u) for u in ("bob", "dave", "root"))
    assert [c["name"] for c in service.list_clusters(bob)] == ["shared", "pricing-a"]
    assert [c["name"] for c in service.list_clusters(dave)] == ["shared", "supply-a"]
    assert [c["name"] for c in service.list_clusters(root)] == list(CLUSTERS)
    with pytest.raises(ClusterNotFoundError, match="Known: shared, supply-a"):
        service.get_cluster(dave, "pricing-a")


def test_a_clusters_view(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), cluster="pricing-a")
    view = service.get_cluster(bob, "pricing-a")
    assert view == {
        "name": "pricing-a",
        "master": "spark://127.0.0.1:1",
        "teams": ["pricing"],
        "jobs_per_app": 1,
        "resources": {"cores": 4, "executor_memory": "2g", "shuffle_partitions": None},
        "conf": {"spark.hadoop.fs.s3a.secret.key": "****", "spark.driver.host": "10.0.0.9"},
        "standby": "shared",
        "unreachable_after_s": 10.0,
        "description": "",
        "answering": False,  # nothing listens on port 1
        "jobs": 1,
    }
    assert service.get_cluster(bob, "shared")["answering"] is None  # local: not probed
    assert service.get_cluster(service.principal("dave"), "shared")["jobs"] == 0  # not his
