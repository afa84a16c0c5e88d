package io.daggerworkbench.udf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Base64;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The dead letters of one stream of one query, collected where its records are decoded.
 *
 * <p>{@link #keep} is the condition a stream's decoded records are kept by: {@code
 * error IS NULL OR dead_letters_<table>(topic, partition, offset, timestamp, key, value,
 * error)} (computed into a column, then filtered on: {@code workbench.sources.letters} says
 * why). Spark evaluates OR left to right and stops at true, so the UDF runs for records
 * that did not decode only: it adds the record to a {@link LetterAccumulator} of this
 * instance, as one JSON object (table, topic, partition, offset, kafka_timestamp in ISO-8601,
 * key and value in base64, error), and returns false, so the record leaves the rows. A record
 * that decoded is only tested for a null error, inside Spark's generated code: nothing of it
 * is copied. The accumulator holds letters whole up to a budget of bytes and only the offsets'
 * span of the rest, so a flood of undecodable records never fills a task's or the driver's
 * memory.
 *
 * <p>The instance travels to the executors inside the plan; each task adds to its own copy of
 * the accumulator, and Spark merges a task's copy into the driver's when the task ends. The
 * driver takes what a micro-batch collected with {@link #drain} once the batch is computed. A
 * retried task adds its letters again: readers keep one letter per table, topic, partition,
 * offset.
 */
public final class DeadLetters
        implements UDF7<String, Integer, Long, Object, byte[], byte[], String, Boolean>,
                Serializable {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String table;
    private final LetterAccumulator letters;

    private DeadLetters(String table, LetterAccumulator letters) {
        this.table = table;
        this.letters = letters;
    }

    /**
     * A collector for stream {@code table} holding up to {@code heldBytes} of whole letters,
     * its accumulator registered on {@code context} (unnamed: Spark's UI keeps every task's
     * update of a named accumulator).
     */
    public static DeadLetters create(SparkContext context, String table, long heldBytes) {
        LetterAccumulator letters = new LetterAccumulator(heldBytes);
        context.register(letters);
        return new DeadLetters(table, letters);
    }

    /** The name the UDF carries in plans: {@code dead_letters_<table>}. */
    public String name() {
        return "dead_letters_" + table;
    }

    /** Whether to keep a record: its error is null, or else it is collected (and dropped). */
    public Column keep(Column error, Column topic, Column partition, Column offset,
            Column timestamp, Column key, Column value) {
        UserDefinedFunction collect =
                functions.udf(this, DataTypes.BooleanType).asNondeterministic().withName(name());
        return error.isNull().or(collect.apply(topic, partition, offset, timestamp, key, value, error));
    }

    @Override
    public Boolean call(String topic, Integer partition, Long offset, Object timestamp,
            byte[] key, byte[] value, String error) {
        if (letters.spilling()) { // past the budget: only where it is, no JSON made
            letters.spill(topic, partition, offset);
            return false;
        }
        ObjectNode letter = JSON.createObjectNode();
        letter.put("table", table);
        letter.put("topic", topic);
        letter.put("partition", partition);
        letter.put("offset", offset);
        letter.put("kafka_timestamp", iso(timestamp));
        letter.put("key", key == null ? null : Base64.getEncoder().encodeToString(key));
        letter.put("value", value == null ? null : Base64.getEncoder().encodeToString(value));
        letter.put("error", error);
        letters.add(new LetterAccumulator.Letter(topic, partition, offset, letter.toString()));
        return false;
    }

    /**
     * What was collected since the last drain, as one JSON object, and nothing kept: {@code
     * {"held": [letter, ...], "spilled": [{"topic", "partition", "first", "last", "count"},
     * ...]}}. Call it when no task of the query runs (inside foreachBatch, after the batch is
     * computed).
     */
    public String drain() {
        synchronized (letters) {
            String taken = "{\"held\":[" + String.join(",", letters.heldJson()) + "],\"spilled\":["
                    + String.join(",", letters.spilledJson()) + "]}";
            letters.reset();
            return taken;
        }
    }

    /** Kafka's timestamp (a TIMESTAMP: Timestamp, or Instant with Spark's Java 8 API). */
    private static String iso(Object timestamp) {
        if (timestamp == null) {
            return null;
        }
        Instant instant = timestamp instanceof Timestamp stamp ? stamp.toInstant() : (Instant) timestamp;
        return instant.toString();
    }
}
