"""A failover's run letters no record twice: the dagger runs on ``primary``, MirrorMaker 2
copies its topic to ``standby``, and the failover's new checkpoint on the standby reads the
mirrored records again (from the earliest: everything a failover handoff could re-read),
with the producers moved to the standby too. (Edit and rollback: ``test_lettered.py`` and
``test_generations.py``.)"""

from __future__ import annotations

import uuid

from polling import wait_for
from readback import ended_offsets
from streaming import publish_events, surge_spec
from test_lettered import places

from workbench.kafka.admin import create_topics, list_topics
from workbench.streaming.job import StreamingJob


def test_a_failover_to_the_mirror_writes_each_dead_letter_once(spark, kafka_mirror, tmp_path):
    primary, standby = kafka_mirror.primary, kafka_mirror.standby
    topic = f"mirrored-{uuid.uuid4().hex[:8]}"
    create_topics(primary.bootstrap, {topic: 3})
    wait_for(lambda: topic in list_topics(standby.bootstrap), 60, "the topic on the standby")
    before = publish_events(primary.bootstrap, topic, 1500, malformed=0.05)
    sinks = [{"type": "log", "rows": 1}]
    spec = surge_spec(primary.bootstrap, topic, tmp_path, sinks, {"max_offsets_per_trigger": 600})

    def run(spec, checkpoint) -> int:
        job = StreamingJob(spec, spark, checkpoint=checkpoint, available_now=True, emit=None)
        return job.run().dead_letters

    assert run(spec, tmp_path / "c1") == before.malformed > 30
    sent = ended_offsets(primary.bootstrap, topic)
    wait_for(lambda: ended_offsets(standby.bootstrap, topic) == sent, 120, "MM2 caught up")

    after = publish_events(standby.bootstrap, topic, 600, seed=9, malformed=0.05)
    assert run(spec.with_bootstrap(standby.bootstrap), tmp_path / "c2") == after.malformed

    held = places(tmp_path / "dead-letters")
    assert set(held.values()) == {1}, [p for p, n in held.items() if n > 1]
    assert len(held) == before.malformed + after.malformed
