/**
 * A job's details in the main area (refreshed every `refreshSeconds` while shown): its state, versions (a SQL diff between any two,
 * open a version's notebook to edit it, roll back), events (who did what) and alerts
 * (each can be silenced). Its actions: move to another Spark cluster, fail its Kafka
 * streams over to another Kafka cluster (each shown only when there is somewhere to go).
 */
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { WorkbenchAPI } from './api';
import { chooseFailover, chooseMoveTarget } from './clusterDialogs';
import { failoverTargets, moveTargets } from './clusterFormat';
import { diffLines, headFacts, schemaVersion, sqlOf, statusClass, utc } from './format';
import { Alert, Job, KafkaCluster, SparkCluster, Version } from './types';

export interface DetailsActions {
  openNotebook(job: Job, version: number): void;
  openLogs(job: Job): void;
}

export class JobDetails extends Widget {
  private job: Job | null = null;
  private versions: Version[] = [];
  private spark: SparkCluster[] = [];
  private kafka: KafkaCluster[] = [];
  private admin = false;
  private asked: Promise<boolean> | null = null; // whether the caller is an admin, asked once

  constructor(
    private api: WorkbenchAPI,
    readonly ref: number,
    private actions: DetailsActions
  ) {
    super();
    this.addClass('dw-details');
    this.node.innerHTML = `
      <header class="dw-details-head"></header>
      <section><h3>Versions</h3>
        <div class="dw-diff-bar">SQL diff of v<select name="a" aria-label="From version"></select>
          and v<select name="b" aria-label="To version"></select></div>
        <pre class="dw-sql-diff"></pre>
        <table class="dw-versions"><thead><tr><th>v</th><th>author</th><th>created (UTC)</th><th>schema</th><th>parity</th><th>note</th><th></th></tr></thead><tbody></tbody></table>
      </section>
      <section><h3>Alerts</h3><table class="dw-alert-table"><tbody></tbody></table></section>
      <section><h3>Events</h3><table class="dw-events"><tbody></tbody></table></section>`;
    this.node.addEventListener('click', event => void this.onClick(event));
    for (const select of this.node.querySelectorAll('select')) {
      select.addEventListener('change', () => this.showDiff());
    }
  }

  /** Seconds between refreshes while shown (0: only on demand). */
  refreshSeconds = 10;
  private timer: number | undefined;

  protected onAfterAttach(): void {
    void this.refresh();
    this.schedule();
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    if (!this.isDisposed && this.refreshSeconds > 0) {
      this.timer = window.setTimeout(async () => {
        if (this.isVisible) {
          await this.refresh();
        }
        this.schedule();
      }, this.refreshSeconds * 1000);
    }
  }

  async refresh(): Promise<void> {
    try {
      const [job, versions, events, alerts, current, spark, kafka] = await Promise.all([
        this.api.job(this.ref),
        this.api.versions(this.ref),
        this.api.events(this.ref, 100),
        this.api.jobAlerts(this.ref, 100),
        this.api.alerts(),
        // the actions' choices: none (their buttons hidden) if the service has no such routes
        this.api.clusters().catch(() => [] as SparkCluster[]),
        this.api.kafkaClusters().catch(() => [] as KafkaCluster[])
      ]);
      this.job = job;
      this.asked ??= this.api.me().then(
        me => me.admin,
        () => false
      );
      this.admin = await this.asked;
      this.spark = spark;
      this.kafka = kafka;
      this.versions = versions;
      this.title.label = `${job.name} (dagger)`;
      this.renderHead(job);
      this.renderVersions(versions);
      this.renderRows(
        '.dw-events tbody',
        events
          .slice()
          .reverse()
          .map(e => [utc(e.time ?? null), e.actor ?? '', e.action, e.detail ? JSON.stringify(e.detail) : ''])
      );
      this.renderAlerts(
        alerts,
        current.filter(a => a.job === job.name)
      );
    } catch (err) {
      this.node.querySelector('.dw-details-head')!.textContent =
        err instanceof Error ? err.message : String(err);
    }
  }

  private renderHead(job: Job): void {
    const head = this.node.querySelector('.dw-details-head')!;
    head.innerHTML = `<h2></h2><span class="dw-badge"></span><span class="dw-head-facts"></span>
      <button class="dw-button" data-act="logs">Logs</button>
      <button class="dw-button" data-act="move" title="Run the job on another Spark cluster">Move to cluster…</button>
      <button class="dw-button" data-act="failover" title="Read the job's streams from another Kafka cluster">Fail over Kafka…</button>
      <button class="dw-button" data-act="refresh">Refresh</button>`;
    (head.querySelector('[data-act="move"]') as HTMLElement).hidden = !moveTargets(
      this.spark,
      job,
      this.admin
    ).length;
    (head.querySelector('[data-act="failover"]') as HTMLElement).hidden = !this.kafka.length;
    head.querySelector('h2')!.textContent = job.name;
    const badge = head.querySelector('.dw-badge')!;
    badge.textContent = job.status;
    badge.className = `dw-badge ${statusClass(job.status)}`;
    head.querySelector('.dw-head-facts')!.textContent = headFacts(job);
  }

  private renderVersions(versions: Version[]): void {
    const body = this.node.querySelector('.dw-versions tbody') as HTMLTableSectionElement;
    body.textContent = '';
    for (const v of versions.slice().reverse()) {
      const row = body.insertRow();
      const parity = v.parity ? `${v.parity.status ?? ''} ${v.parity.rows ?? ''}`.trim() : '-';
      for (const text of [
        `v${v.number}${v.current ? ' (current)' : ''}`,
        v.author,
        utc(v.created_at),
        schemaVersion(v.schema_version),
        parity,
        v.note || ''
      ]) {
        row.insertCell().textContent = text;
      }
      const cell = row.insertCell();
      cell.innerHTML =
        `<button class="dw-button" data-act="notebook">Notebook</button>` +
        (v.current ? '' : `<button class="dw-button" data-act="rollback">Roll back</button>`);
      row.dataset.version = String(v.number);
    }
    const [a, b] = this.node.querySelectorAll('select');
    const changed = a.length !== versions.length;
    for (const select of [a, b]) {
      const keep = select.value;
      select.length = 0;
      for (const v of versions) {
        select.add(new Option(String(v.number), String(v.number)));
      }
      select.value = keep;
    }
    if (changed) {
      // new versions: the diff of the last two
      b.value = String(versions[versions.length - 1]?.number ?? '');
      a.value = String(versions[versions.length - 2]?.number ?? b.value);
    }
    this.showDiff();
  }

  private showDiff(): void {
    const [a, b] = [...this.node.querySelectorAll('select')].map(s =>
      this.versions.find(v => String(v.number) === s.value)
    );
    const pre = this.node.querySelector('.dw-sql-diff')!;
    pre.textContent = '';
    if (!a || !b) {
      return;
    }
    for (const line of diffLines(sqlOf(a.spec_yaml ?? ''), sqlOf(b.spec_yaml ?? ''))) {
      const span = document.createElement('span');
      span.className = line.kind === '+' ? 'dw-add' : line.kind === '-' ? 'dw-del' : '';
      span.textContent = `${line.kind} ${line.text}\n`;
      pre.appendChild(span);
    }
  }

  /** The job's alert history, newest first; `current` (the alerts now) says which are silenced. */
  private renderAlerts(alerts: Alert[], current: Alert[]): void {
    const silenced = new Map(current.filter(a => a.silenced_by).map(a => [a.fingerprint, a.silenced_by]));
    const body = this.node.querySelector('.dw-alert-table tbody') as HTMLTableSectionElement;
    body.textContent = '';
    if (!alerts.length) {
      body.insertRow().insertCell().textContent = 'No alert has fired.';
    }
    for (const alert of alerts.slice().reverse()) {
      const row = body.insertRow();
      const labels = Object.entries(alert.labels || {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      const values = Object.entries(alert.values || {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      const by = silenced.get(alert.fingerprint);
      const status = by ? `${alert.status} (silenced by ${by})` : alert.status;
      for (const text of [utc(alert.time ?? alert.starts_at ?? null), alert.rule, labels, status, values]) {
        row.insertCell().textContent = text;
      }
      row.insertCell().innerHTML = by ? '' : '<button class="dw-button" data-act="silence">Silence</button>';
      row.dataset.rule = alert.rule;
      row.dataset.labels = JSON.stringify(alert.labels || {});
    }
  }

  private renderRows(selector: string, rows: string[][]): void {
    const body = this.node.querySelector(selector) as HTMLTableSectionElement;
    body.textContent = '';
    for (const cells of rows) {
      const row = body.insertRow();
      for (const text of cells) {
        row.insertCell().textContent = text;
      }
    }
  }

  private async onClick(event: MouseEvent): Promise<void> {
    const button = (event.target as HTMLElement).closest('[data-act]') as HTMLElement | null;
    const job = this.job;
    if (!button || !job) {
      return;
    }
    const row = button.closest('tr') as HTMLTableRowElement | null;
    const act = button.dataset.act;
    if (act === 'refresh') {
      return this.refresh();
    }
    if (act === 'logs') {
      return this.actions.openLogs(job);
    }
    if (act === 'move') {
      return this.move(job);
    }
    if (act === 'failover') {
      return this.failover(job);
    }
    if (act === 'notebook' && row) {
      return this.actions.openNotebook(job, Number(row.dataset.version));
    }
    if (act === 'rollback' && row) {
      return this.rollback(job, Number(row.dataset.version));
    }
    if (act === 'silence' && row) {
      return this.silence(job, row.dataset.rule!, JSON.parse(row.dataset.labels || '{}'));
    }
  }

  private async rollback(job: Job, version: number): Promise<void> {
    const answer = await showDialog({
      title: `Roll ${job.name} back to v${version}?`,
      body: `The job restarts on version ${version}'s spec (v${job.version} stays in the history).`,
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Roll back' })]
    });
    if (answer.button.accept) {
      await this.guard(`Could not roll back ${job.name}`, () => this.api.rollback(job.id, version));
    }
  }

  private async move(job: Job): Promise<void> {
    const cluster = await chooseMoveTarget(job, moveTargets(this.spark, job, this.admin));
    if (cluster) {
      await this.guard(`Could not move ${job.name}`, () => this.api.move(job.id, cluster));
    }
  }

  private async failover(job: Job): Promise<void> {
    const chosen = await chooseFailover(job, failoverTargets(this.kafka));
    if (chosen) {
      await this.guard(`Could not fail over ${job.name}`, () =>
        this.api.failover(job.id, chosen.cluster, chosen.reason)
      );
    }
  }

  private async silence(job: Job, rule: string, labels: Record<string, string>): Promise<void> {
    const form = new SilenceForm(rule, labels);
    const answer = await showDialog({
      title: `Silence ${rule} of ${job.name}`,
      body: form,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Silence' })]
    });
    if (answer.button.accept && answer.value) {
      const { duration, comment } = answer.value;
      await this.guard('Could not silence', () =>
        this.api.silence(rule, { ...labels, job: job.name }, duration, comment, job.team)
      );
    }
  }

  private async guard(title: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      await showErrorMessage(title, err as Error);
    }
    await this.refresh();
  }
}

class SilenceForm extends Widget {
  constructor(rule: string, labels: Record<string, string>) {
    super();
    this.addClass('dw-silence-form');
    this.node.innerHTML = `<p></p>
      <label>For <input name="for" value="2h"></label>
      <label>Comment <input name="comment" required placeholder="why (roadworks on Jl. Sudirman)"></label>`;
    const where = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    this.node.querySelector('p')!.textContent =
      `Mute ${rule}${where ? ` where ${where}` : ''} (notifications only; the alert still shows).`;
  }

  getValue(): { duration: string; comment: string } {
    const value = (name: string) =>
      (this.node.querySelector(`[name="${name}"]`) as HTMLInputElement).value.trim();
    return { duration: value('for'), comment: value('comment') };
  }
}
