"""The mm2.properties a dev mirror runs with (the process itself: test_mirror.py)."""

from __future__ import annotations

import pytest

from workbench.dev.mirror import IDENTITY, Mirror, Side

pytestmark = pytest.mark.unit


def test_one_way_identity_mirror_of_the_chosen_topics_and_groups(tmp_path):
    mirror = Mirror(
        Side("primary", "127.0.0.1:1,127.0.0.1:2"),
        Side("standby", "127.0.0.1:3"),
        tmp_path,
        topics="booking-log|driver-location",
        groups="workbench-.*",
        replication=3,
    )
    props = dict(
        (k.strip(), v.strip())
        for k, _, v in (line.partition("=") for line in mirror.properties().splitlines())
    )
    assert props["clusters"] == "primary, standby"
    assert props["primary.bootstrap.servers"] == "127.0.0.1:1,127.0.0.1:2"
    assert props["primary->standby.enabled"] == "true"
    assert props["standby->primary.enabled"] == "false"
    assert props["primary->standby.topics"] == "booking-log|driver-location"
    assert props["primary->standby.groups"] == "workbench-.*"
    assert props["replication.policy.class"] == IDENTITY
    assert props["checkpoints.topic.replication.factor"] == "3"
    assert props["sync.group.offsets.enabled"] == "false"
    assert not mirror.status().running
