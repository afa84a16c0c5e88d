import { Job, KafkaCluster, KafkaProbe, SparkCluster } from '../src/types';

/** A job as the service lists it, with what a test changes in `over`. */
export function job(over: Partial<Job> = {}): Job {
  return {
    id: 1,
    name: 'surge',
    team: 'pricing',
    status: 'RUNNING',
    desired: 'RUNNING',
    version: 1,
    cluster: null,
    created_by: 'alice',
    created_at: '',
    updated_at: '',
    failures: 0,
    run: { id: 'r1', pid: 1, started_at: null },
    metrics: {},
    last_error: null,
    alerts_firing: 0,
    ...over
  };
}

/** A Spark cluster as `GET clusters` lists it. */
export function sparkCluster(over: Partial<SparkCluster> = {}): SparkCluster {
  return {
    name: 'local',
    master: 'local[2]',
    teams: null,
    jobs_per_app: 1,
    resources: { cores: 2, executor_memory: '1g', shuffle_partitions: 8 },
    standby: null,
    unreachable_after_s: 10,
    description: '',
    conf: {},
    answering: null,
    jobs: 0,
    ...over
  };
}

/** A Kafka cluster as `GET kafka-clusters` lists it. */
export function kafkaCluster(over: Partial<KafkaCluster> = {}): KafkaCluster {
  return {
    name: 'main',
    bootstrap_servers: 'k1:9092,k2:9092',
    security: {},
    standby: null,
    failover_after_s: 60,
    description: '',
    ...over
  };
}

/** `GET kafka-clusters/NAME`: the cluster and whether it answers. */
export function kafkaProbe(over: Partial<KafkaProbe> = {}): KafkaProbe {
  return {
    ...kafkaCluster(),
    reachable: true,
    cluster_id: 'abc',
    brokers: 3,
    error: null,
    jobs: [],
    ...over
  };
}
