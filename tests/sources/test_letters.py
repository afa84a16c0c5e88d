"""Dead-letter taps (workbench.sources.letters), on real Spark: Kafka-shaped records through
the JVM decoder and a tap, batch plans."""

from __future__ import annotations

import base64
import json
import random
from datetime import UTC, datetime

import pytest

from workbench.dev.generator import Generator, encode, malformed_bytes
from workbench.schemas import default_registry
from workbench.sources.kafka import decoded_rows
from workbench.sources.letters import Drained, LetterTap, Spilled
from workbench.sources.protobuf import decoder

pytestmark = pytest.mark.unit

MESSAGE = "esb.booking.BookingLogMessage"
STAMP = datetime(2026, 11, 27, 8, 30, 15, 250000, tzinfo=UTC)


@pytest.fixture(scope="module")
def records(spark):
    """40 bookings with 4 undecodable records among them (offsets 5, 15, 25, 35; the one at
    25 has no key), as Spark's Kafka source gives them, with ``_decoded`` in front."""
    from pyspark.sql import functions as F

    registry = default_registry()
    events = Generator(seed=3).take("bookings", 40)
    rng = random.Random(3)
    rows = []
    for offset, event in enumerate(events):
        bad = offset % 10 == 5
        value = malformed_bytes(rng) if bad else encode(event, MESSAGE, registry)
        key = None if offset == 25 else f"k{offset}".encode()
        rows.append((key, value, "bookings", offset % 2, offset, STAMP))
    raw = spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp",
    )
    decode = decoder(spark, registry, MESSAGE, required_field="event_timestamp")
    return raw.select(decode(F.col("value")).alias("_decoded"), *raw.columns), rows


def test_a_tap_keeps_the_rows_that_decoded_and_collects_the_others(spark, records):
    frame, sent = records
    tap = LetterTap(spark, "booking")
    rows = decoded_rows(frame, tap)
    assert rows.count() == 36
    drained = tap.drain()
    assert drained.spilled == []
    letters = sorted(drained.held, key=lambda letter: letter["offset"])
    assert [letter["offset"] for letter in letters] == [5, 15, 25, 35]
    for letter in letters:
        key, value, topic, partition, offset, _ = sent[letter["offset"]]
        assert (letter["table"], letter["topic"], letter["partition"]) == (
            "booking",
            topic,
            partition,
        )
        assert "esb.booking.BookingLogMessage" in letter["error"]
        assert datetime.fromisoformat(letter["kafka_timestamp"]) == STAMP
        assert base64.b64decode(letter["value"]) == value
        assert letter["key"] == (None if key is None else base64.b64encode(key).decode())
    assert tap.drain() == Drained([], [])  # drained: the next batch starts empty


def test_a_filter_on_message_fields_loses_no_dead_letter(spark, records):
    """The SQL's filters read the message, which is null for a dead letter: were one to run
    before the tap, it would drop the record uncollected."""
    frame, _ = records
    tap = LetterTap(spark, "booking")
    rows = decoded_rows(frame, tap).where("status = 'NO_SUCH_STATUS'")
    assert rows.count() == 0
    assert len(tap.drain().held) == 4


def test_taps_are_separate_and_each_run_collects_again(spark, records):
    frame, _ = records
    first, second = LetterTap(spark, "booking"), LetterTap(spark, "booking")
    one, two = decoded_rows(frame, first), decoded_rows(frame, second)
    one.count()
    one.count()  # a plan computed twice collects twice (readers keep one per offset)
    assert len(first.drain().held) == 8 and second.drain().held == []
    two.count()
    assert len(second.drain().held) == 4 and first.drain().held == []


def _nodes(plan):
    """The nodes of a physical plan (a py4j SparkPlan), root first."""
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from _nodes(children.apply(i))


def test_a_record_that_decoded_is_not_copied_for_the_tap(spark, records):
    """Spark's generated filter reads every column its condition names before it tests the
    condition, so a tap in the filter itself copied each record's key and read its topic.
    The tap's condition is a projected column, whose OR reads them in its second branch, for
    records that did not decode only; the filters name none of the Kafka columns."""
    frame, _ = records
    tap = LetterTap(spark, "booking")
    rows = decoded_rows(frame, tap).where("status = 'CREATED'")
    nodes = list(_nodes(rows._jdf.queryExecution().executedPlan()))
    kafka = {"key", "value", "topic", "partition", "offset", "timestamp"}
    for node in (n for n in nodes if n.nodeName() == "Filter"):
        names = node.condition().references().toSeq()
        assert not kafka & {names.apply(i).name() for i in range(names.size())}
    projections = " ".join(n.toString() for n in nodes if n.nodeName() == "Project")
    assert "dead_letters_booking(topic" in projections
    assert rows.count() > 0 and len(tap.drain().held) == 4


def size(letter) -> int:
    """A letter's JSON, as the tap counts it against its budget (characters, compact)."""
    return len(json.dumps(letter, separators=(",", ":"), ensure_ascii=False))


@pytest.mark.parametrize("held_letters", [0, 1, 3])
def test_past_its_budget_a_tap_keeps_only_where_the_letters_are(spark, records, held_letters):
    """A flood of undecodable records must not fill a task's or the driver's memory: past its
    budget of bytes a tap keeps, per topic partition, the span of the letters' offsets and
    their count, and holds no more whole letters, in the tasks as on the driver."""
    frame, _ = records
    whole = LetterTap(spark, "booking")
    decoded_rows(frame, whole).count()
    sizes = sorted(size(letter) for letter in whole.drain().held)
    budget = sum(sizes[:held_letters])  # room for the smallest held_letters letters at most

    tap = LetterTap(spark, "booking", held_bytes=budget)
    assert decoded_rows(frame, tap).count() == 36
    drained = tap.drain()
    assert len(drained.held) <= held_letters
    assert sum(size(x) for x in drained.held) <= budget
    held = {letter["offset"] for letter in drained.held}
    in_spans = {o for o in (5, 15, 25, 35) for x in drained.spilled if x.holds("bookings", 1, o)}
    assert held | in_spans == {5, 15, 25, 35}
    assert len(held) + sum(span.count for span in drained.spilled) == 4
    for span in drained.spilled:  # one topic partition each, ending on letters
        assert (span.topic, span.partition) == ("bookings", 1)
        assert span.first % 10 == span.last % 10 == 5
    assert tap.drain() == Drained([], [])


def test_a_spilled_span_holds_what_lies_in_it():
    span = Spilled("bookings", 1, 15, 35, 2)
    assert span.holds("bookings", 1, 15) and span.holds("bookings", 1, 35)
    assert not span.holds("bookings", 0, 25) and not span.holds("other", 1, 25)
    assert not span.holds("bookings", 1, 14) and not span.holds("bookings", 1, 36)
