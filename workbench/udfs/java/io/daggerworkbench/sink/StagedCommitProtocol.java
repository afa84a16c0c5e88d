package io.daggerworkbench.sink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol;
import org.apache.spark.sql.execution.streaming.SinkFileStatus;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's file-sink commit protocol, with every file written under a hidden staging folder
 * and published (renamed into place) once the batch is in the sink's {@code _spark_metadata}
 * log: {@code spark.sql.streaming.commitProtocolClass}.
 *
 * <p>Spark's own protocol writes a batch's files where they belong and then commits them in
 * its log; Spark's readers read the log, but a reader of the folder (pyarrow, pandas, DuckDB)
 * also reads the files of a batch being written, and those a killed batch left, which its
 * replay writes again. Here a task writes {@code <path>/_dagger_staging/<dir>/<file>}
 * (a leading {@code _}: pyarrow and pandas skip it); the log records the published
 * name {@code <path>/<dir>/<file>}; after the log's commit the files are renamed there. A
 * crash between the two leaves staged files the log holds: the next batch's writer publishes
 * them, and drops staged files the log does not hold (of a batch that never committed),
 * before it writes ({@code workbench.sinks.staging}).
 */
public class StagedCommitProtocol extends ManifestFileCommitProtocol {
    /** The staging folder, under the sink's path. */
    public static final String STAGING = "_dagger_staging";

    private final String root;
    /** The task's files: {staged, published}, on the executor. */
    private transient List<String[]> files;

    public StagedCommitProtocol(String jobId, String path) {
        super(jobId, path);
        this.root = path;
    }

    @Override
    public void setupTask(TaskAttemptContext context) {
        super.setupTask(context);
        files = new ArrayList<>();
    }

    @Override
    public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, String ext) {
        String published = super.newTaskTempFile(context, dir, ext);
        String staged = staged(new Path(root), new Path(published)).toString();
        files.add(new String[] {staged, published});
        return staged;
    }

    @Override
    public FileCommitProtocol.TaskCommitMessage commitTask(TaskAttemptContext context) {
        List<SinkFileStatus> statuses = new ArrayList<>();
        try {
            for (String[] file : files) {
                Path staged = new Path(file[0]);
                FileSystem fs = staged.getFileSystem(context.getConfiguration());
                FileStatus written = fs.getFileStatus(staged);
                Path published = fs.makeQualified(new Path(file[1]));
                statuses.add(SinkFileStatus.apply(new FileStatus(written.getLen(), false,
                        written.getReplication(), written.getBlockSize(),
                        written.getModificationTime(), published)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new FileCommitProtocol.TaskCommitMessage(
                CollectionConverters.asScala(statuses).toList());
    }

    @Override
    public void abortTask(TaskAttemptContext context) {
        for (String[] file : files) {
            Path staged = new Path(file[0]);
            try {
                staged.getFileSystem(context.getConfiguration()).delete(staged, false);
            } catch (IOException e) {
                // best effort: the next batch's writer drops staged files the log lacks
            }
        }
    }

    @Override
    public void commitJob(JobContext context, Seq<FileCommitProtocol.TaskCommitMessage> commits) {
        super.commitJob(context, commits); // the batch is in the log: committed
        try {
            Path base = new Path(root);
            FileSystem fs = base.getFileSystem(context.getConfiguration());
            base = fs.makeQualified(base);
            for (FileCommitProtocol.TaskCommitMessage commit : CollectionConverters.asJava(commits)) {
                @SuppressWarnings("unchecked")
                Seq<SinkFileStatus> statuses = (Seq<SinkFileStatus>) commit.obj();
                for (SinkFileStatus status : CollectionConverters.asJava(statuses)) {
                    Path published = status.toFileStatus().getPath();
                    publish(fs, staged(base, published), published);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("publishing the committed batch's files", e);
        }
    }

    private static void publish(FileSystem fs, Path staged, Path published) throws IOException {
        fs.mkdirs(published.getParent());
        if (!fs.rename(staged, published) && !fs.exists(published)) {
            throw new IOException("could not rename " + staged + " to " + published);
        }
    }

    /** Where {@code file}, under {@code base}, is staged: the same names under STAGING. */
    static Path staged(Path base, Path file) {
        Deque<String> names = new ArrayDeque<>();
        Path at = file;
        while (at != null && !at.equals(base)) {
            names.push(at.getName());
            at = at.getParent();
        }
        if (at == null) {
            throw new IllegalStateException(file + " is not under the sink's path " + base);
        }
        Path out = new Path(base, STAGING);
        for (String name : names) {
            out = new Path(out, name);
        }
        return out;
    }
}
