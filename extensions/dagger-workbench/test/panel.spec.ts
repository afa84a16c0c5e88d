import { Widget } from '@lumino/widgets';

import { ServiceError, WorkbenchAPI } from '../src/api';
import { DaggersPanel } from '../src/panel';
import { Job, KafkaCluster, KafkaProbe, Me, Progress, SparkCluster } from '../src/types';
import { job, kafkaCluster, kafkaProbe, sparkCluster } from './jobs';

/** The API's answers, set by each test (the panel reads me, jobs, progress and clusters). */
class Answers {
  me: Me = { user: 'root', teams: [], admin: true };
  jobs: Job[] | ServiceError = [];
  progress = new Map<number, Progress[]>();
  clusters: SparkCluster[] = [sparkCluster()];
  kafka: KafkaCluster[] = [];
  probes = new Map<string, KafkaProbe>();
}

function apiOf(answers: Answers): WorkbenchAPI {
  const api = Object.create(WorkbenchAPI.prototype) as WorkbenchAPI;
  api.me = async () => answers.me;
  api.jobs = async () => {
    if (answers.jobs instanceof ServiceError) {
      throw answers.jobs;
    }
    return answers.jobs;
  };
  api.progress = async (ref: string | number) => answers.progress.get(Number(ref)) ?? [];
  api.clusters = async () => answers.clusters;
  api.kafkaClusters = async () => answers.kafka;
  api.kafkaCluster = async (name: string) => answers.probes.get(name)!;
  return api;
}

function numbered(id: number, over: Partial<Job> = {}): Job {
  return job({
    id,
    name: `dagger-${id}`,
    team: id % 2 ? 'pricing' : 'supply',
    run: { id: `r${id}`, pid: 1, started_at: null },
    metrics: { input_rate: 10 * id, processed_rate: 9 * id, offsets_behind_latest: id, last_batch_at: 't1' },
    alerts_firing: id === 3 ? 2 : 0,
    ...over
  });
}

const nothing = () => undefined;

function panelOf(answers: Answers, refreshSeconds = 0): DaggersPanel {
  const panel = new DaggersPanel({
    api: apiOf(answers),
    actions: { openDetails: nothing, openLogs: nothing, openHealth: nothing, openNotebook: nothing },
    refreshSeconds
  });
  Widget.attach(panel, document.body);
  return panel;
}

describe('DaggersPanel', () => {
  it('lists 200 jobs and updates their rows in place', async () => {
    const answers = new Answers();
    answers.jobs = Array.from({ length: 200 }, (_, i) => numbered(i + 1));
    const panel = panelOf(answers);
    await panel.refresh();
    const rows = panel.node.querySelectorAll('.dw-job');
    expect(rows).toHaveLength(200);
    const third = panel.node.querySelector('.dw-job[data-name="dagger-3"]')!;
    expect(third.querySelector('.dw-badge')!.className).toContain('dw-status-running');
    expect(third.querySelector('[data-cell="rates"]')!.textContent).toBe('in 30 \u00b7 out 27 /s');
    expect(third.querySelector('[data-cell="alerts"]')!.textContent).toContain('2');
    expect((third.querySelector('[data-action="start"]') as HTMLButtonElement).disabled).toBe(true);

    answers.jobs = answers.jobs.map(j =>
      j.id === 3 ? { ...j, status: 'STOPPED', desired: 'STOPPED', run: null } : j
    );
    await panel.refresh();
    expect(panel.node.querySelector('.dw-job[data-name="dagger-3"]')).toBe(third);
    expect(third.getAttribute('data-status')).toBe('STOPPED');
    expect((third.querySelector('[data-action="start"]') as HTMLButtonElement).disabled).toBe(false);
    expect(Number(panel.node.dataset.renderMs)).toBeLessThan(300);
    panel.dispose();
  });

  it('gives admins a team filter', async () => {
    const answers = new Answers();
    answers.jobs = [numbered(1), numbered(2), numbered(3)];
    const panel = panelOf(answers);
    await panel.refresh();
    const filter = panel.node.querySelector('.dw-team-filter') as HTMLSelectElement;
    expect(filter.hidden).toBe(false);
    expect([...filter.options].map(o => o.value)).toEqual(['', 'pricing', 'supply']);
    filter.value = 'supply';
    filter.dispatchEvent(new Event('change'));
    expect([...panel.node.querySelectorAll('.dw-job')].map(r => r.getAttribute('data-name'))).toEqual([
      'dagger-2'
    ]);
    panel.dispose();
  });

  it('says when the service is unreachable and keeps the last rows', async () => {
    const answers = new Answers();
    answers.me = { user: 'alice', teams: ['pricing'], admin: false };
    answers.jobs = [numbered(1)];
    const panel = panelOf(answers);
    await panel.refresh();
    expect((panel.node.querySelector('.dw-team-filter') as HTMLElement).hidden).toBe(true);
    answers.jobs = new ServiceError(0, 'Unreachable', 'the Jupyter server did not answer');
    await panel.refresh();
    const banner = panel.node.querySelector('.dw-banner') as HTMLElement;
    expect(banner.hidden).toBe(false);
    expect(banner.textContent).toContain('Job service unreachable');
    expect(panel.node.classList).toContain('dw-unreachable');
    expect(panel.node.querySelectorAll('.dw-job')).toHaveLength(1);
    answers.jobs = [numbered(1)];
    await panel.refresh();
    expect(banner.hidden).toBe(true);
    panel.dispose();
  });

  it('reschedules its refresh when the interval setting changes', async () => {
    jest.useFakeTimers();
    try {
      const answers = new Answers();
      answers.jobs = [numbered(1)];
      const panel = panelOf(answers, 60);
      await panel.refresh();
      const asked = jest.spyOn(panel.api, 'jobs');
      panel.refreshSeconds = 1; // not after the 60 s already scheduled
      await jest.advanceTimersByTimeAsync(3500);
      expect(asked.mock.calls.length).toBeGreaterThanOrEqual(3);
      panel.refreshSeconds = 0; // only on demand
      asked.mockClear();
      await jest.advanceTimersByTimeAsync(120_000);
      expect(asked).not.toHaveBeenCalled();
      panel.dispose();
    } finally {
      jest.useRealTimers();
    }
  });

  it("lists the clusters below the jobs, and each job's cluster", async () => {
    const answers = new Answers();
    answers.jobs = [numbered(1, { cluster: 'local-b' })];
    answers.clusters = [
      sparkCluster({ answering: true, master: 'spark://m:7077', standby: 'local-b' }),
      sparkCluster({ name: 'local-b', master: 'local[1]', jobs: 1 })
    ];
    answers.kafka = [kafkaCluster({ standby: 'dr' }), kafkaCluster({ name: 'dr', bootstrap_servers: 'x:1' })];
    answers.probes.set('main', kafkaProbe());
    answers.probes.set('dr', kafkaProbe({ name: 'dr', reachable: false, error: 'no brokers' }));
    const panel = panelOf(answers);
    const asked = jest.spyOn(panel.api, 'kafkaCluster');
    await panel.refresh();
    await new Promise(resolve => setTimeout(resolve, 0)); // the probes' answers
    const line = (kind: string, name: string) =>
      panel.node.querySelector(`.dw-cluster[data-kind="${kind}"][data-name="${name}"]`) as HTMLElement;
    expect(line('spark', 'local').dataset.reach).toBe('up');
    expect(line('spark', 'local').textContent).toContain(
      'spark://m:7077 \u00b7 0 jobs \u00b7 standby local-b'
    );
    expect(line('spark', 'local-b').dataset.reach).toBe('unknown');
    expect(line('kafka', 'main').dataset.reach).toBe('up');
    expect(line('kafka', 'dr').dataset.reach).toBe('down');
    expect((line('kafka', 'dr').querySelector('.dw-dot') as HTMLElement).title).toBe(
      'Unreachable: no brokers'
    );
    const row = panel.node.querySelector('.dw-job[data-name="dagger-1"]') as HTMLElement;
    expect(row.dataset.cluster).toBe('local-b');
    expect(row.querySelector('[data-cell="cluster"]')!.textContent).toBe('local-b');

    await panel.refresh(); // the Kafka clusters were asked just now: not again
    expect(asked).toHaveBeenCalledTimes(2);
    const closed = jest.spyOn(panel.api, 'clusters');
    panel.clusters.node.open = false;
    await panel.refresh();
    expect(closed).not.toHaveBeenCalled();
    panel.dispose();
  });
});
