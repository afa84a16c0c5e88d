package io.daggerworkbench.flinkbench;

import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.table.functions.AggregateFunction;

/**
 * {@code DistinctCount(value STRING) -> BIGINT}: the number of distinct non-null values, Dagger's
 * aggregate UDF for Flink SQL. The seen values live in a {@link MapView}, the data view Flink's
 * own {@code COUNT(DISTINCT)} uses, so the state backend (not a Java set in one accumulator
 * object) holds them.
 */
public final class DistinctCount extends AggregateFunction<Long, DistinctCount.Seen> {

    /** The accumulator: the values seen and how many there are. */
    public static final class Seen {
        public MapView<String, Boolean> values = new MapView<>();
        public long count;
    }

    @Override
    public Seen createAccumulator() {
        return new Seen();
    }

    public void accumulate(Seen acc, @DataTypeHint("STRING") String value) throws Exception {
        if (value != null && !acc.values.contains(value)) {
            acc.values.put(value, Boolean.TRUE);
            acc.count++;
        }
    }

    @Override
    public Long getValue(Seen acc) {
        return acc.count;
    }
}
