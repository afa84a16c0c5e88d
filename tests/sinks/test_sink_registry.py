"""The sink registry: result sinks and dead-letter sinks, one registry, asked by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import pytest
from streaming import new_topic, publish_events, surge_spec

from workbench.exceptions import SpecError
from workbench.paths import subdir
from workbench.sinks.registry import SINKS, LetterSinkConfig, SinkContext, Written
from workbench.spec import parse
from workbench.streaming import deadletters
from workbench.streaming.job import StreamingJob

pytestmark = pytest.mark.unit

if TYPE_CHECKING:
    from workbench.streaming.deadletters import Letters

SPEC = {
    "name": "lettered",
    "streams": [
        {
            "table": "booking",
            "message": "BookingLogMessage",
            "topics": ["t"],
            "bootstrap_servers": "broker:1",
        }
    ],
    "sql": "SELECT * FROM booking",
}


def test_dead_letter_types_come_from_the_registry_with_the_jobs_defaults():
    assert {"parquet", "kafka"} <= set(SINKS.letters.names())
    parquet = SINKS.letters_sink(parse(SPEC))
    assert parquet.describe() == f"parquet {subdir('dead-letters') / 'lettered'}"
    kafka = SINKS.letters_sink(parse(SPEC | {"dead_letter": {"type": "kafka"}}))
    assert kafka.model_dump() == {
        "type": "kafka",
        "topic": "lettered-dead-letters",
        "bootstrap_servers": "broker:1",  # the first stream's cluster
    }
    spec = parse(SPEC | {"dead_letter": {"type": "kafka", "topic": "dlq"}})
    assert deadletters.describe(spec) == "kafka topic dlq"


def test_a_writer_may_leave_the_count_of_a_batch_it_wrote_whole_to_the_job():
    counts = []

    def batch_rows() -> int:
        counts.append(1)
        return 7

    assert Written.of(5).counted(batch_rows) == (5, 0) and not counts
    assert Written(None).counted(batch_rows) == (7, 0)
    assert Written(0, skipped=None).counted(batch_rows) == (0, 7)
    assert Written(3, skipped=2).counted(batch_rows) == (3, 2) and len(counts) == 2


def test_an_unknown_dead_letter_type_names_the_known_ones():
    with pytest.raises(SpecError) as err:
        parse(SPEC | {"dead_letter": {"type": "kafak"}})
    assert err.value.key == "dead_letter.type"
    assert "Did you mean kafka? Known: kafka, parquet." in str(err.value)


class MemoryLetters(LetterSinkConfig):
    """A dead-letter sink registered by a test, as a third-party one would be."""

    type: Literal["memory"] = "memory"

    @classmethod
    def for_job(cls, dead, spec) -> MemoryLetters:
        return cls()

    def open_letters(self, ctx: SinkContext) -> MemoryWriter:
        return MemoryWriter(ctx)


KEPT: dict[int, list[dict[str, Any]]] = {}


class MemoryWriter:
    def __init__(self, ctx: SinkContext):
        self.ctx = ctx

    def write(self, letters: Letters, batch_id: int) -> int:
        KEPT[batch_id] = list(letters.rows())
        return len(KEPT[batch_id])

    def close(self) -> None:
        pass


@pytest.fixture
def memory_letters():
    SINKS.add("memory", MemoryLetters)
    KEPT.clear()
    yield KEPT
    SINKS.letters.remove("memory")


def test_the_job_writes_dead_letters_to_the_registered_type(
    spark, kafka_broker, tmp_path, memory_letters
):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "letters-in")
    sent = publish_events(bootstrap, topic, 1200, malformed=0.03)
    sinks = [{"type": "log", "rows": 1}]
    spec = surge_spec(bootstrap, topic, tmp_path, sinks, dead_letter={"type": "memory"})
    totals = StreamingJob(spec, spark, available_now=True, emit=None).run()

    letters = [x for batch in memory_letters.values() for x in batch]
    assert len(letters) == sent.malformed == totals.dead_letters > 10
    assert {x["topic"] for x in letters} == {topic}
    assert all("esb.booking.BookingLogMessage" in x["error"] for x in letters)
    assert not (tmp_path / "dead-letters").exists()  # nothing went to the default Parquet
