package io.daggerworkbench.flinkbench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.config.TableConfigOptions;

/**
 * Runs Flink SQL scripts on one local MiniCluster, for the streaming benchmark.
 *
 * <p>{@code java SurgeJob SLOTS} starts a MiniCluster of one TaskManager with {@code SLOTS}
 * slots and prints {@code @flinkbench ready MINICLUSTER_MS JVM_UPTIME_MS}. Then each line
 * {@code run SCRIPT} on standard input runs the statements of the file {@code SCRIPT} (separated
 * by a {@code ;} at the end of a line; {@code SET 'key' = 'value'} ones configure the
 * environment, as in Flink's SQL client) in a new streaming TableEnvironment submitting to that
 * cluster with parallelism {@code SLOTS}, waits for every job they start to end, and prints
 * {@code @flinkbench done TOTAL_MS SUBMIT_MS NET_RUNTIME_MS}: wall clock from the new
 * environment to the last job's end, the part up to the job's submission (DDL, planning, code
 * generation, submission), and the job's own runtime as the cluster counts it. A failure prints
 * {@code @flinkbench error MESSAGE} and the loop goes on. {@code gc} collects the garbage of
 * the runs before (answering {@code @flinkbench gc}). End of input stops the cluster.
 */
public final class SurgeJob {
    private static final String TAG = "@flinkbench ";
    /** {@code SET 'key' = 'value'}: an option of the environment the script runs in. */
    private static final Pattern SET =
            Pattern.compile("(?is)SET\\s+'([^']+)'\\s*=\\s*'([^']*)'");

    private SurgeJob() {}

    public static void main(String[] args) throws Exception {
        int slots = Integer.parseInt(args[0]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        long start = System.nanoTime();
        try (MiniCluster cluster = new MiniCluster(clusterConfig(slots))) {
            cluster.start();
            URI rest = cluster.getRestAddress().get();
            long startMs = (System.nanoTime() - start) / 1_000_000;
            long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
            out.println(TAG + "ready " + startMs + " " + uptime);
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("run ")) {
                    out.println(TAG + run(Path.of(line.substring(4).trim()), rest, slots));
                } else if (line.equals("gc")) {
                    System.gc();
                    out.println(TAG + "gc");
                }
            }
        }
    }

    private static MiniClusterConfiguration clusterConfig(int slots) {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.NUM_TASK_SLOTS, slots);
        conf.set(RestOptions.BIND_PORT, "0");
        return new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(slots)
                .build();
    }

    private static String run(Path script, URI rest, int slots) {
        try {
            long start = System.nanoTime();
            List<String> statements = statements(Files.readString(script));
            Configuration conf = configuration(rest, slots);
            for (String statement : statements) {
                Matcher set = SET.matcher(statement);
                if (set.matches()) {
                    conf.setString(set.group(1), set.group(2));
                }
            }
            TableEnvironment env = TableEnvironment.create(
                    EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
            long submitted = 0;
            long netRuntime = 0;
            for (String statement : statements) {
                if (SET.matcher(statement).matches()) {
                    continue;
                }
                TableResult result = env.executeSql(statement);
                Optional<JobClient> job = result.getJobClient();
                if (job.isPresent()) {
                    submitted = System.nanoTime();
                    JobExecutionResult done = job.get().getJobExecutionResult().get();
                    netRuntime += done.getNetRuntime();
                }
            }
            long end = System.nanoTime();
            long submitMs = submitted == 0 ? 0 : (submitted - start) / 1_000_000;
            return "done " + (end - start) / 1_000_000 + " " + submitMs + " " + netRuntime;
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return ("error " + e + " (root cause: " + root + ")").replace('\n', ' ');
        }
    }

    private static Configuration configuration(URI rest, int slots) {
        Configuration conf = new Configuration();
        conf.set(DeploymentOptions.TARGET, "remote");
        conf.set(RestOptions.ADDRESS, rest.getHost());
        conf.set(RestOptions.PORT, rest.getPort());
        conf.set(CoreOptions.DEFAULT_PARALLELISM, slots);
        conf.set(TableConfigOptions.LOCAL_TIME_ZONE, "UTC");
        return conf;
    }

    /** The statements of a script: text up to each {@code ;} that ends a line, comments out. */
    static List<String> statements(String script) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n", -1)) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            String text = line.stripTrailing();
            if (text.endsWith(";")) {
                current.append(text, 0, text.length() - 1);
                statements.add(current.toString().strip());
                current.setLength(0);
            } else {
                current.append(line).append('\n');
            }
        }
        if (!current.toString().isBlank()) {
            statements.add(current.toString().strip());
        }
        return statements;
    }
}
