/**
 * The daggers panel's "Clusters" section (collapsible, below the jobs): the Spark clusters
 * the caller may use (master, a dot for whether it answers, the caller's jobs on it,
 * standby) and the Kafka clusters (bootstrap servers, a dot for whether they answer,
 * standby).
 *
 * The panel refreshes it with its jobs; a closed section asks nothing. Spark clusters
 * come with their state (`GET clusters`); a Kafka cluster's state is one more request
 * each (`GET kafka-clusters/NAME`, which asks the brokers: seconds when they are down),
 * so it is asked at most every `probeSeconds` and never twice at once.
 */
import { WorkbenchAPI } from './api';
import { answeringTitle, kafkaFacts, reach, reachableTitle, sparkFacts } from './clusterFormat';
import { KafkaCluster, KafkaProbe, SparkCluster } from './types';

interface Probe {
  at: number;
  asking: boolean;
  answer: KafkaProbe | null;
}

export class ClustersSection {
  readonly node: HTMLDetailsElement;
  /** Seconds between two probes of one Kafka cluster. */
  probeSeconds: number;
  private spark: SparkCluster[] = [];
  private kafka: KafkaCluster[] = [];
  private probes = new Map<string, Probe>();
  private shown = '';
  private body: HTMLElement;
  private note: HTMLElement;

  constructor(
    private api: WorkbenchAPI,
    options: { probeSeconds?: number; onOpen?: () => void } = {}
  ) {
    this.probeSeconds = options.probeSeconds ?? 30;
    this.node = document.createElement('details');
    this.node.className = 'dw-clusters';
    this.node.open = true;
    this.node.innerHTML = `
      <summary class="dw-clusters-title">Clusters</summary>
      <div class="dw-clusters-note" hidden></div>
      <div class="dw-clusters-body"></div>`;
    this.body = this.node.querySelector('.dw-clusters-body')!;
    this.note = this.node.querySelector('.dw-clusters-note')!;
    this.node.addEventListener('toggle', () => {
      if (this.node.open) {
        options.onOpen?.();
      }
    });
  }

  /** The Spark clusters of the last refresh. */
  get sparkClusters(): SparkCluster[] {
    return this.spark;
  }

  /** The Kafka clusters of the last refresh. */
  get kafkaClusters(): KafkaCluster[] {
    return this.kafka;
  }

  /** Ask for the clusters and show them (nothing while the section is closed). */
  async refresh(): Promise<void> {
    if (!this.node.open) {
      return;
    }
    try {
      [this.spark, this.kafka] = await Promise.all([this.api.clusters(), this.api.kafkaClusters()]);
      this.note.hidden = true;
    } catch (err) {
      this.note.textContent = `Clusters unavailable: ${err instanceof Error ? err.message : String(err)}`;
      this.note.hidden = false;
      return;
    }
    this.render();
    this.probeKafka();
  }

  private probeKafka(): void {
    const now = Date.now();
    for (const cluster of this.kafka) {
      const probe = this.probes.get(cluster.name) ?? { at: 0, asking: false, answer: null };
      this.probes.set(cluster.name, probe);
      if (probe.asking || now - probe.at < this.probeSeconds * 1000) {
        continue;
      }
      probe.asking = true;
      this.api
        .kafkaCluster(cluster.name)
        .then(answer => (probe.answer = answer))
        .catch(() => (probe.answer = null))
        .finally(() => {
          probe.asking = false;
          probe.at = Date.now();
          this.render();
        });
    }
  }

  /** Rebuild the lists when what they show changed (a few rows: no in-place updates). */
  private render(): void {
    const lines = [
      ...this.spark.map(c => ({
        kind: 'spark',
        name: c.name,
        facts: sparkFacts(c),
        state: reach(c.answering),
        title: answeringTitle(c),
        description: c.description
      })),
      ...this.kafka.map(c => {
        const answer = this.probes.get(c.name)?.answer;
        return {
          kind: 'kafka',
          name: c.name,
          facts: kafkaFacts(c),
          state: reach(answer ? answer.reachable : null),
          title: reachableTitle(answer),
          description: c.description
        };
      })
    ];
    const key = JSON.stringify(lines);
    if (key === this.shown) {
      return;
    }
    this.shown = key;
    this.body.textContent = '';
    for (const [kind, heading] of [
      ['spark', 'Spark'],
      ['kafka', 'Kafka']
    ]) {
      const mine = lines.filter(l => l.kind === kind);
      if (!mine.length) {
        continue;
      }
      const title = document.createElement('div');
      title.className = 'dw-clusters-kind';
      title.textContent = heading;
      const list = document.createElement('ul');
      list.className = 'dw-cluster-list';
      list.setAttribute('aria-label', `${heading} clusters`);
      for (const line of mine) {
        const item = document.createElement('li');
        item.className = 'dw-cluster';
        item.dataset.kind = line.kind;
        item.dataset.name = line.name;
        item.dataset.reach = line.state;
        item.title = line.description || line.name;
        item.innerHTML = `<span class="dw-dot"></span><span class="dw-cluster-name"></span>
          <span class="dw-cluster-facts"></span>`;
        const dot = item.querySelector('.dw-dot') as HTMLElement;
        dot.classList.add(`dw-dot-${line.state}`);
        dot.title = line.title;
        item.querySelector('.dw-cluster-name')!.textContent = line.name;
        item.querySelector('.dw-cluster-facts')!.textContent = line.facts;
        list.appendChild(item);
      }
      this.body.append(title, list);
    }
  }
}
