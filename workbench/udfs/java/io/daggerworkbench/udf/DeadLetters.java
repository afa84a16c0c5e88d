package io.daggerworkbench.udf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.CollectionAccumulator;

/**
 * The dead letters of one stream of one query, collected where its records are decoded.
 *
 * <p>{@link #keep} is the condition a stream's decoded records are kept by: {@code
 * error IS NULL OR dead_letters_<table>(topic, partition, offset, timestamp, key, value,
 * error)} (computed into a column, then filtered on: {@code workbench.sources.letters} says
 * why). Spark evaluates OR left to right and stops at true, so the UDF runs for records
 * that did not decode only: it adds the record to an accumulator of this instance, as one JSON
 * object (table, topic, partition, offset, kafka_timestamp in ISO-8601, key and value in
 * base64, error), and returns false, so the record leaves the rows. A record that decoded is
 * only tested for a null error, inside Spark's generated code: nothing of it is copied.
 *
 * <p>The instance travels to the executors inside the plan; each task adds to its own copy of
 * the accumulator, and Spark merges a task's copy into the driver's when the task ends. The
 * driver takes what a micro-batch collected with {@link #drain} once the batch is computed. A
 * retried task adds its letters again: readers keep one letter per topic, partition, offset.
 */
public final class DeadLetters
        implements UDF7<String, Integer, Long, Object, byte[], byte[], String, Boolean>,
                Serializable {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String table;
    private final CollectionAccumulator<String> letters;

    private DeadLetters(String table, CollectionAccumulator<String> letters) {
        this.table = table;
        this.letters = letters;
    }

    /**
     * A collector for stream {@code table}, its accumulator registered on {@code context}
     * (unnamed: Spark's UI keeps every task's update of a named accumulator).
     */
    public static DeadLetters create(SparkContext context, String table) {
        CollectionAccumulator<String> letters = new CollectionAccumulator<>();
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
        ObjectNode letter = JSON.createObjectNode();
        letter.put("table", table);
        letter.put("topic", topic);
        letter.put("partition", partition);
        letter.put("offset", offset);
        letter.put("kafka_timestamp", iso(timestamp));
        letter.put("key", key == null ? null : Base64.getEncoder().encodeToString(key));
        letter.put("value", value == null ? null : Base64.getEncoder().encodeToString(value));
        letter.put("error", error);
        letters.add(letter.toString());
        return false;
    }

    /**
     * The letters collected since the last drain, as one JSON array, and none kept: call it
     * when no task of the query runs (inside foreachBatch, after the batch is computed).
     */
    public synchronized String drain() {
        List<String> taken = new ArrayList<>(letters.value());
        letters.reset();
        return "[" + String.join(",", taken) + "]";
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
