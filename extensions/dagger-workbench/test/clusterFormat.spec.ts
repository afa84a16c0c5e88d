import {
  answeringTitle,
  clusterOf,
  failoverTargets,
  jobsCount,
  kafkaFacts,
  moveTargets,
  reach,
  reachableTitle,
  sparkFacts
} from '../src/clusterFormat';
import { job, kafkaCluster, kafkaProbe, sparkCluster } from './jobs';

describe('cluster status dots', () => {
  it('are up, down or unknown', () => {
    expect([reach(true), reach(false), reach(null), reach(undefined)]).toEqual([
      'up',
      'down',
      'unknown',
      'unknown'
    ]);
  });

  it("say what a Spark master's state means", () => {
    const spark = sparkCluster({ master: 'spark://m:7077' });
    expect(answeringTitle({ ...spark, answering: true })).toBe(
      'The master spark://m:7077 accepts connections'
    );
    expect(answeringTitle({ ...spark, answering: false })).toBe('The master spark://m:7077 does not answer');
    expect(answeringTitle(sparkCluster())).toBe('Not probed (local[2] has no master to ask)');
  });

  it("say what a Kafka cluster's probe found", () => {
    expect(reachableTitle(null)).toBe('Not asked yet');
    expect(reachableTitle(kafkaProbe({ brokers: 1 }))).toBe('Reachable: 1 broker');
    expect(reachableTitle(kafkaProbe({ reachable: false, brokers: 0, error: 'timed out' }))).toBe(
      'Unreachable: timed out'
    );
  });
});

describe('cluster lines', () => {
  it('show master, jobs and standby of a Spark cluster', () => {
    expect(sparkFacts(sparkCluster({ jobs: 1 }))).toBe('local[2] \u00b7 1 job');
    expect(sparkFacts(sparkCluster({ jobs: 3, standby: 'local-b' }))).toBe(
      'local[2] \u00b7 3 jobs \u00b7 standby local-b'
    );
    expect(jobsCount(0)).toBe('0 jobs');
  });

  it('show bootstrap servers and standby of a Kafka cluster', () => {
    expect(kafkaFacts(kafkaCluster())).toBe('k1:9092,k2:9092');
    expect(kafkaFacts(kafkaCluster({ standby: 'dr' }))).toBe('k1:9092,k2:9092 \u00b7 standby dr');
  });

  it("name a job's cluster", () => {
    expect(clusterOf(job({ cluster: 'local-b' }))).toBe('local-b');
    expect(clusterOf(job())).toBe('default');
  });
});

describe('where a job may go', () => {
  const clusters = [
    sparkCluster(),
    sparkCluster({ name: 'local-b', master: 'local[1]' }),
    sparkCluster({ name: 'supply-only', teams: ['supply'] }),
    sparkCluster({ name: 'shared', teams: ['pricing', 'supply'] })
  ];

  it('moves to the other Spark clusters its team may use', () => {
    const names = (cs: { name: string }[]) => cs.map(c => c.name);
    expect(names(moveTargets(clusters, job({ cluster: 'local' })))).toEqual(['local-b', 'shared']);
    expect(names(moveTargets(clusters, job({ cluster: 'local', team: 'supply' })))).toEqual([
      'local-b',
      'supply-only',
      'shared'
    ]);
    expect(moveTargets([sparkCluster()], job({ cluster: 'local' }))).toEqual([]);
    expect(names(moveTargets(clusters, job({ cluster: 'local' }), true))).toEqual([
      'local-b',
      'supply-only',
      'shared'
    ]);
  });

  it('fails over to a standby first', () => {
    const kafka = [
      kafkaCluster({ name: 'main', standby: 'dr' }),
      kafkaCluster({ name: 'other' }),
      kafkaCluster({ name: 'dr' })
    ];
    expect(failoverTargets(kafka).map(c => c.name)).toEqual(['dr', 'main', 'other']);
  });
});
