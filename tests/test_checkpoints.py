"""A checkpoint knows what it belongs to: another dagger, other streams, another Kafka
cluster or edited SQL is refused before Spark starts, in one line that says what to do.

The case users met: a YAML saved from the Composer with the notebook's dagger name
reused that job's checkpoint (both default to ``.workbench/checkpoints/<name>``) and
died in a 333-line py4j trace. Spark errors at start are one paragraph now, the trace
only with ``--verbose``.
"""

from __future__ import annotations

import json
import shutil
import uuid

import pytest
from cli_runner import workbench
from streaming import SURGE_SQL, new_topic, publish_events, surge_spec

from workbench.exceptions import CheckpointMismatchError, KafkaClusterChangedError
from workbench.kafka.admin import create_topics
from workbench.streaming import checkpoints
from workbench.streaming.job import StreamingJob, default_checkpoint, with_bootstrap

STATELESS_SQL = "SELECT order_number, event_timestamp AS window_timestamp FROM booking"


def error_lines(stderr: str) -> list[str]:
    """stderr without the JVM's three start-up lines (another item of the issue)."""
    noise = ("WARNING: Using incubator", "Setting default log level", "To adjust logging")
    return [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(noise)]


@pytest.fixture
def topic(kafka_broker):
    name = new_topic(kafka_broker.bootstrap, "ckpt")
    publish_events(kafka_broker.bootstrap, name, 600)
    return name


def test_composer_yaml_with_the_notebooks_name_is_refused_before_spark_starts(
    spark, kafka_broker, topic, tmp_path
):
    name = f"notebook-{uuid.uuid4().hex[:6]}"
    notebook = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [], name=name, checkpoint=None)
    checkpoint = default_checkpoint(name)
    try:
        StreamingJob(notebook, spark, available_now=True, emit=None).run()
        manifest = checkpoints.load(checkpoint)
        assert manifest is not None and manifest.dagger == name
        cluster = (kafka_broker.state_dir / "cluster.id").read_text().strip()
        assert manifest.clusters == {"booking": cluster}  # the real broker's id

        composer = notebook.model_copy(update={"sql": STATELESS_SQL})
        (tmp_path / "composer.yaml").write_text(composer.to_yaml())
        result = workbench("run", tmp_path / "composer.yaml", "--available-now")
        assert result.returncode == 1
        [line] = result.stderr.splitlines()  # Spark never started: no JVM line at all
        assert line.startswith(f"error: checkpoint {checkpoint} cannot run this spec: ")
        assert "the SQL (or event time, emit mode or deduplication) changed" in line
        assert "--checkpoint NEW_DIR" in line and "new generation" in line
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def test_other_dagger_streams_or_cluster_are_refused(spark, kafka_broker, topic, tmp_path):
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])
    checkpoint = tmp_path / "checkpoint"
    StreamingJob(spec, spark, available_now=True, emit=None).run()

    def refusal(other) -> str:
        with pytest.raises(CheckpointMismatchError) as err:
            StreamingJob(other, spark, available_now=True, emit=None).start()
        assert not spark.streams.active  # refused before any query started
        return str(err.value)

    assert f"belongs to dagger '{spec.name}', not 'x'" in refusal(
        spec.model_copy(update={"name": "x"})
    )
    moved = spec.model_copy(
        update={"streams": [spec.streams[0].model_copy(update={"topics": ["elsewhere"]})]}
    )
    assert "its streams are booking (esb.booking.BookingLogMessage from " in refusal(moved)

    manifest = json.loads((checkpoint / checkpoints.MANIFEST).read_text())
    manifest["clusters"] = {"booking": "another-cluster-id"}
    (checkpoint / checkpoints.MANIFEST).write_text(json.dumps(manifest))
    assert "read from Kafka cluster another-cluster-id" in refusal(spec)

    # Settings that keep the state layout keep the checkpoint: triggers, sinks, offsets,
    # the watermark delay.
    manifest["clusters"] = {"booking": None}
    (checkpoint / checkpoints.MANIFEST).write_text(json.dumps(manifest))
    calm = spec.model_copy(update={"trigger_interval": "5s", "sinks": [], "watermark_delay": "20s"})
    assert checkpoints.spec_hash(calm) == checkpoints.spec_hash(spec)
    StreamingJob(calm, spark, available_now=True, emit=None).run()


def test_an_old_checkpoint_without_manifest_is_adopted_or_refused(
    spark, kafka_broker, topic, tmp_path
):
    bootstrap = kafka_broker.bootstrap
    stateless = surge_spec(bootstrap, topic, tmp_path, [], sql=STATELESS_SQL)
    checkpoint = tmp_path / "checkpoint"
    StreamingJob(stateless, spark, available_now=True, emit=None).run()
    (checkpoint / checkpoints.MANIFEST).unlink()  # as an earlier workbench left it

    other = new_topic(bootstrap, "ckpt-other")
    elsewhere = stateless.model_copy(
        update={"streams": [stateless.streams[0].model_copy(update={"topics": [other]})]}
    )
    with pytest.raises(CheckpointMismatchError, match=f"read topics \\['{topic}'\\]"):
        StreamingJob(elsewhere, spark, emit=None).start()

    # Same topics: adopted. The SQL differs (nothing recorded it), so Spark fails on the
    # state it expects: one paragraph, the trace only with --verbose.
    publish_events(bootstrap, topic, 300, seed=9)
    spec_file = tmp_path / "surge.yaml"
    spec_file.write_text(stateless.model_copy(update={"sql": SURGE_SQL}).to_yaml())
    result = workbench("run", spec_file, "--available-now")
    assert result.returncode == 1
    assert "was written by an earlier workbench" in result.stdout
    assert "it is adopted" in result.stdout
    [line] = error_lines(result.stderr)
    assert line.startswith(f"error: dagger '{stateless.name}' (checkpoint {checkpoint}) stopped: ")
    assert "--checkpoint NEW_DIR" in line and "--verbose" in line
    assert "Traceback" not in line and "py4j" not in line and len(line) < 1200

    verbose = workbench("run", spec_file, "--available-now", "--verbose")
    assert verbose.returncode == 1
    assert "\tat org.apache.spark" in verbose.stderr  # the JVM trace, asked for
    assert error_lines(verbose.stderr)[-1].startswith("error: dagger ")


def test_a_checkpoint_resumed_on_another_kafka_cluster_is_refused_with_what_to_do(
    kafka_broker, kafka_cluster3, tmp_path
):
    topic = new_topic(kafka_broker.bootstrap, "moved")  # the same topic on both clusters
    create_topics(kafka_cluster3.bootstrap, {topic: 3}, replication=3)
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, [])
    folder = tmp_path / "checkpoint"
    checkpoints.check(folder, spec)  # a new checkpoint records each stream's cluster id
    recorded = (kafka_broker.state_dir / "cluster.id").read_text().strip()
    assert checkpoints.load(folder).clusters == {"booking": recorded}

    moved = with_bootstrap(spec, kafka_cluster3.bootstrap)
    with pytest.raises(KafkaClusterChangedError) as err:
        checkpoints.check(folder, moved)
    assert err.value.changes == [("booking", recorded, kafka_cluster3.cluster_id)]

    (tmp_path / "moved.yaml").write_text(moved.to_yaml())
    result = workbench("run", tmp_path / "moved.yaml", "--available-now")
    assert result.returncode == 1
    [line] = error_lines(result.stderr)  # refused before Spark starts
    assert line.startswith(f"error: checkpoint {folder} cannot resume on this Kafka cluster: ")
    assert f"was read from Kafka cluster {recorded}, its servers now answer as cluster " in line
    assert f"`workbench jobs failover {spec.name} --kafka-cluster NAME`" in line
    assert "--checkpoint NEW_DIR" in line
    checkpoints.check(folder, spec)  # back on its own cluster it resumes
