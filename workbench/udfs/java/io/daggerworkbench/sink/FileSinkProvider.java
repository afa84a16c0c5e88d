package io.daggerworkbench.sink;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.streaming.FileStreamSink;
import org.apache.spark.sql.execution.streaming.Sink;
import org.apache.spark.sql.sources.StreamSinkProvider;
import org.apache.spark.sql.streaming.OutputMode;
import scala.collection.immutable.Seq;

/**
 * A streaming query's Parquet sink with the job around each micro-batch, no foreachBatch:
 * {@code writeStream.format("io.daggerworkbench.sink.FileSinkProvider").option("path", ...)
 * .option("hook", key)}, the hook registered under {@code key} with {@link #register} first.
 *
 * <p>Each micro-batch goes, as the query planned it, to Spark's own {@link FileStreamSink}
 * (its {@code _spark_metadata} log keeps the folder exactly once) under the batch id the
 * hook's {@link BatchHook#before} gives; a batch the log holds already is computed instead
 * (a Spark job that writes nothing), so whatever its plan observes (rows, dead letters) is
 * there for {@link BatchHook#after}. Spark's {@code foreachBatch} would first wrap the batch
 * as an RDD and plan the write again: about 10 ms a micro-batch (docs/benchmarks.md, 27).
 */
public final class FileSinkProvider implements StreamSinkProvider {
    private static final Map<String, BatchHook> HOOKS = new ConcurrentHashMap<>();

    /** Make {@code hook} the one of the sink whose {@code hook} option is {@code key}. */
    public static void register(String key, BatchHook hook) {
        HOOKS.put(key, hook);
    }

    public static void unregister(String key) {
        HOOKS.remove(key);
    }

    @Override
    public Sink createSink(SQLContext context, scala.collection.immutable.Map<String, String> options,
            Seq<String> partitionColumns, OutputMode mode) {
        String path = options.get("path").getOrElse(() -> null);
        String key = options.get("hook").getOrElse(() -> null);
        BatchHook hook = key == null ? null : HOOKS.get(key);
        if (path == null || hook == null) {
            throw new IllegalArgumentException(
                    "the workbench file sink needs a 'path' and the 'hook' of a registered BatchHook"
                    + " (got path " + path + ", hook " + key + ")");
        }
        FileStreamSink files = new FileStreamSink(context.sparkSession(), path,
                new ParquetFileFormat(), partitionColumns,
                scala.collection.immutable.Map$.MODULE$.<String, String>empty());
        return new HookedSink(files, hook, path);
    }

    private static final class HookedSink implements Sink {
        private final FileStreamSink files;
        private final BatchHook hook;
        private final String path;

        HookedSink(FileStreamSink files, BatchHook hook, String path) {
            this.files = files;
            this.hook = hook;
            this.path = path;
        }

        @Override
        public void addBatch(long batchId, Dataset<Row> data) {
            long logged = hook.before(batchId);
            if (logged >= 0) {
                files.addBatch(logged, data);
            } else {
                data.queryExecution().toRdd().count();
            }
            hook.after(batchId);
        }

        @Override
        public String toString() {
            return "DaggerFileSink[" + path + "]";
        }
    }
}
