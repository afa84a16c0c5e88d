/**
 * Pure helpers for the named clusters (no DOM, no server): a cluster's status dot, the
 * one-line facts the panel shows of a Spark or Kafka cluster, and which clusters a job
 * may move or fail over to.
 */
import { Job, KafkaCluster, SparkCluster } from './types';

/** A status dot's state: answering, not answering, or not known (not probed, not asked). */
export type Reach = 'up' | 'down' | 'unknown';

export function reach(answering: boolean | null | undefined): Reach {
  return answering === true ? 'up' : answering === false ? 'down' : 'unknown';
}

/** The tooltip of a Spark cluster's dot. */
export function answeringTitle(cluster: Pick<SparkCluster, 'answering' | 'master'>): string {
  const state = reach(cluster.answering);
  if (state === 'up') {
    return `The master ${cluster.master} accepts connections`;
  }
  if (state === 'down') {
    return `The master ${cluster.master} does not answer`;
  }
  return `Not probed (${cluster.master} has no master to ask)`;
}

/** The tooltip of a Kafka cluster's dot (`probe`: the last answer of `kafka-clusters/NAME`). */
export function reachableTitle(
  probe: { reachable: boolean; brokers: number; error: string | null } | null | undefined
): string {
  if (!probe) {
    return 'Not asked yet';
  }
  if (probe.reachable) {
    return `Reachable: ${probe.brokers} broker${probe.brokers === 1 ? '' : 's'}`;
  }
  return `Unreachable${probe.error ? `: ${probe.error}` : ''}`;
}

/** `1 job` / `3 jobs`. */
export function jobsCount(count: number): string {
  return `${count} job${count === 1 ? '' : 's'}`;
}

/** The Spark cluster of a job as its row shows it. */
export function clusterOf(job: Pick<Job, 'cluster'>): string {
  return job.cluster ?? 'default';
}

/** The facts of a Spark cluster's line: master, the caller's jobs on it, its standby. */
export function sparkFacts(cluster: SparkCluster): string {
  const standby = cluster.standby ? ` \u00b7 standby ${cluster.standby}` : '';
  return `${cluster.master} \u00b7 ${jobsCount(cluster.jobs)}${standby}`;
}

/** The facts of a Kafka cluster's line: its bootstrap servers and standby. */
export function kafkaFacts(cluster: KafkaCluster): string {
  const standby = cluster.standby ? ` \u00b7 standby ${cluster.standby}` : '';
  return `${cluster.bootstrap_servers}${standby}`;
}

/** The Spark clusters `job` may move to: the others its team may use (an admin's: all others). */
export function moveTargets(
  clusters: SparkCluster[],
  job: Pick<Job, 'cluster' | 'team'>,
  admin = false
): SparkCluster[] {
  return clusters.filter(
    c => c.name !== job.cluster && (admin || c.teams === null || c.teams.includes(job.team))
  );
}

/** The Kafka clusters offered for a failover: a standby of another first. */
export function failoverTargets(clusters: KafkaCluster[]): KafkaCluster[] {
  const standbys = new Set(clusters.map(c => c.standby).filter(Boolean));
  return clusters.slice().sort((a, b) => Number(standbys.has(b.name)) - Number(standbys.has(a.name)));
}
