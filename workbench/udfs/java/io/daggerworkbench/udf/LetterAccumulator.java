package io.daggerworkbench.udf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.util.AccumulatorV2;

/**
 * The dead letters of one tap, in bounded memory: letters are held whole (as JSON) up to a
 * budget of bytes; from the first that does not fit, only the place of each is kept, as the
 * span of offsets they lie in per topic partition and how many they were ({@link Spilled}).
 *
 * <p>Each task fills its own copy; Spark merges a task's copy into the driver's when the task
 * ends, letter by letter under the same budget. So neither a task nor the driver ever holds
 * more than the budget of letters, whatever share of a micro-batch fails to decode; the
 * reader ({@code workbench.streaming.deadletters}) reads a spilled span again from Kafka and keeps the
 * records that fail to decode there, which are exactly the letters spilled (and any held ones
 * inside the span, which it drops from the held ones).
 */
public final class LetterAccumulator
        extends AccumulatorV2<LetterAccumulator.Letter, LetterAccumulator> {
    private static final long serialVersionUID = 1L;

    /** One dead letter: where it came from and the whole letter as JSON. */
    public record Letter(String topic, int partition, long offset, String json)
            implements Serializable {}

    /** A topic partition. */
    record Place(String topic, int partition) implements Serializable {}

    /** Letters not held: the span of their offsets in one topic partition, and their count. */
    public static final class Spilled implements Serializable {
        private static final long serialVersionUID = 1L;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        long count;

        void add(long from, long to, long letters) {
            first = Math.min(first, from);
            last = Math.max(last, to);
            count += letters;
        }
    }

    private final long budget;
    private ArrayList<Letter> held = new ArrayList<>();
    private long heldBytes;
    private LinkedHashMap<Place, Spilled> spilled = new LinkedHashMap<>();

    /** An empty accumulator holding up to {@code budget} bytes of letters (JSON characters). */
    public LetterAccumulator(long budget) {
        this.budget = budget;
    }

    @Override
    public synchronized boolean isZero() {
        return held.isEmpty() && spilled.isEmpty();
    }

    @Override
    public LetterAccumulator copy() {
        LetterAccumulator copy = new LetterAccumulator(budget);
        copy.merge(this);
        return copy;
    }

    @Override
    public LetterAccumulator copyAndReset() {
        return new LetterAccumulator(budget);
    }

    @Override
    public synchronized void reset() {
        held = new ArrayList<>();
        heldBytes = 0;
        spilled = new LinkedHashMap<>();
    }

    @Override
    public synchronized void add(Letter letter) {
        if (spilled.isEmpty() && heldBytes + letter.json().length() <= budget) {
            held.add(letter);
            heldBytes += letter.json().length();
        } else {
            Place place = new Place(letter.topic(), letter.partition());
            spill(place, letter.offset(), letter.offset(), 1);
        }
    }

    /**
     * Whether the next letter will be spilled (once one is, every later one is): the caller
     * then gives only its place, {@link #spill(String, int, long)}, and makes no JSON of it.
     */
    public synchronized boolean spilling() {
        return !spilled.isEmpty();
    }

    /** A letter spilled: its place only. */
    public synchronized void spill(String topic, int partition, long offset) {
        spill(new Place(topic, partition), offset, offset, 1);
    }

    private void spill(Place place, long first, long last, long count) {
        spilled.computeIfAbsent(place, k -> new Spilled()).add(first, last, count);
    }

    @Override
    public synchronized void merge(AccumulatorV2<Letter, LetterAccumulator> other) {
        LetterAccumulator that = (LetterAccumulator) other;
        for (Letter letter : that.held) {
            add(letter);
        }
        for (Map.Entry<Place, Spilled> entry : that.spilled.entrySet()) {
            Spilled span = entry.getValue();
            spill(entry.getKey(), span.first, span.last, span.count);
        }
    }

    @Override
    public LetterAccumulator value() {
        return this;
    }

    /** The held letters' JSON, in the order they were added. */
    public synchronized List<String> heldJson() {
        List<String> json = new ArrayList<>(held.size());
        for (Letter letter : held) {
            json.add(letter.json());
        }
        return json;
    }

    /**
     * The spilled spans as JSON objects: {@code {"topic", "partition", "first", "last",
     * "count"}} (first and last inclusive).
     */
    public synchronized List<String> spilledJson() {
        List<String> json = new ArrayList<>(spilled.size());
        for (Map.Entry<Place, Spilled> entry : spilled.entrySet()) {
            Spilled span = entry.getValue();
            json.add(JsonNodeFactory.instance.objectNode()
                    .put("topic", entry.getKey().topic())
                    .put("partition", entry.getKey().partition())
                    .put("first", span.first)
                    .put("last", span.last)
                    .put("count", span.count)
                    .toString());
        }
        return json;
    }
}
