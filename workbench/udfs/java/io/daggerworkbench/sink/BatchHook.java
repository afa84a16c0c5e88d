package io.daggerworkbench.sink;

/**
 * The job's side of each micro-batch that {@link FileSinkProvider}'s sink writes: implemented
 * in Python (a Py4J callback), called on the query's stream thread around the write.
 */
public interface BatchHook {
    /**
     * Before the query's micro-batch {@code batchId} is written.
     *
     * @return the batch id it has in the folder's log, or -1 when the log holds it already (a
     *     replay: the batch is computed, not written)
     */
    long before(long batchId);

    /** After the micro-batch was written (or computed), before the query commits it. */
    void after(long batchId);
}
