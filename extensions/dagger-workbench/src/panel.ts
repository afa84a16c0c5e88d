/**
 * The daggers panel (left sidebar): the caller's jobs, one row each, refreshed by itself.
 *
 * Rows are keyed by job id and updated in place (text and attributes only when they
 * change), so a refresh of 200 jobs is one request and a few DOM writes; while the
 * sidebar is collapsed the panel asks nothing. The sparkline of
 * each running job is seeded once per run from `jobs/JOB/progress` (a few requests at a
 * time) and then grows by one point per new micro-batch the jobs list reports. When the
 * service does not answer the panel says so and keeps the last rows, greyed.
 * `data-refresh-ms` / `data-render-ms` on the panel's node give the last refresh's times
 * (of the jobs: the clusters section below them refreshes alongside, see `clustersSection`).
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { ServiceError, WorkbenchAPI } from './api';
import { clusterOf } from './clusterFormat';
import { ClustersSection } from './clustersSection';
import { byTeam, canAct, compact, RateSeries, sparkPoints, statusClass } from './format';
import { Job, Me } from './types';

/** What the panel's rows open; the plugins provide them. */
export interface PanelActions {
  openDetails(job: Job): void;
  openLogs(job: Job): void;
  openHealth(job: Job): void;
  openNotebook(job: Job): void;
}

export interface PanelOptions {
  api: WorkbenchAPI;
  actions: PanelActions;
  refreshSeconds?: number;
  confirmActions?: boolean;
  sparklinePoints?: number;
  /** seconds between two probes of one Kafka cluster (the clusters section) */
  kafkaProbeSeconds?: number;
}

type Action = 'stop' | 'start' | 'restart';
const ACTIONS: Action[] = ['stop', 'start', 'restart'];
const SEED_CONCURRENCY = 4;

export class DaggersPanel extends Widget {
  readonly api: WorkbenchAPI;
  private actions: PanelActions;
  private rows = new Map<number, Row>();
  private series = new Map<number, RateSeries>();
  private jobs: Job[] = [];
  private me: Me | null = null;
  private team = '';
  private timer: number | undefined;
  private seeding = new Set<number>();
  private list: HTMLElement;
  private banner: HTMLElement;
  private filter: HTMLSelectElement;
  private summary: HTMLElement;
  private refreshing: Promise<void> | null = null;
  /** the "Clusters" section below the jobs */
  readonly clusters: ClustersSection;
  private seconds: number;
  confirmActions: boolean;
  sparklineSize: number;

  constructor(options: PanelOptions) {
    super();
    this.api = options.api;
    this.actions = options.actions;
    this.seconds = options.refreshSeconds ?? 5;
    this.confirmActions = options.confirmActions ?? true;
    this.sparklineSize = options.sparklinePoints ?? 30;
    this.id = 'dagger-workbench-panel';
    this.addClass('dw-panel');
    this.title.caption = 'Daggers';
    this.node.innerHTML = `
      <div class="dw-panel-header">
        <span class="dw-panel-title">Daggers</span>
        <select class="dw-team-filter" aria-label="Team" hidden><option value="">all teams</option></select>
        <button class="dw-button dw-refresh" title="Refresh now" aria-label="Refresh">&#x21bb;</button>
      </div>
      <div class="dw-banner" role="alert" hidden></div>
      <div class="dw-summary"></div>
      <ul class="dw-jobs" aria-label="Jobs"></ul>`;
    this.list = this.node.querySelector('.dw-jobs')!;
    this.banner = this.node.querySelector('.dw-banner')!;
    this.filter = this.node.querySelector('.dw-team-filter')!;
    this.summary = this.node.querySelector('.dw-summary')!;
    this.filter.addEventListener('change', () => {
      this.team = this.filter.value;
      this.render();
    });
    this.node.querySelector('.dw-refresh')!.addEventListener('click', () => void this.refresh());
    this.list.addEventListener('click', event => this.onClick(event));
    this.clusters = new ClustersSection(this.api, {
      probeSeconds: options.kafkaProbeSeconds,
      onOpen: () => void this.clusters.refresh()
    });
    this.node.appendChild(this.clusters.node);
  }

  /** Seconds between refreshes (0: only on demand). A change takes effect at once: the
   * next refresh is rescheduled (none with 0). */
  get refreshSeconds(): number {
    return this.seconds;
  }

  set refreshSeconds(seconds: number) {
    const changed = seconds !== this.seconds;
    this.seconds = seconds;
    if (changed && !this.refreshing && this.timer !== undefined) {
      this.schedule();
    }
  }

  /** The jobs of the last refresh (all teams the caller sees). */
  get current(): Job[] {
    return this.jobs;
  }

  protected onAfterAttach(): void {
    void this.refresh();
  }

  protected onAfterShow(): void {
    void this.refresh();
  }

  protected onBeforeDetach(): void {
    window.clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  /** Fetch the jobs and render them; schedules the next refresh. */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh().finally(() => {
        this.refreshing = null;
        this.schedule();
      });
    }
    return this.refreshing;
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.isDisposed && this.refreshSeconds > 0) {
      // a collapsed sidebar asks nothing; showing it refreshes at once
      this.timer = window.setTimeout(
        () => (this.isVisible ? void this.refresh() : this.schedule()),
        this.refreshSeconds * 1000
      );
    }
  }

  private async doRefresh(): Promise<void> {
    const t0 = performance.now();
    const clusters = this.clusters.refresh();
    try {
      if (!this.me) {
        this.me = await this.api.me();
        this.filter.hidden = !this.me.admin;
      }
      this.jobs = await this.api.jobs();
      this.showError(null);
    } catch (err) {
      this.showError(err);
      await clusters;
      return;
    }
    const t1 = performance.now();
    this.render();
    const t2 = performance.now();
    this.node.dataset.refreshMs = (t2 - t0).toFixed(1);
    this.node.dataset.renderMs = (t2 - t1).toFixed(1);
    this.seedSparklines();
    await clusters;
  }

  private showError(err: unknown): void {
    this.node.classList.toggle('dw-unreachable', false);
    if (err === null) {
      this.banner.hidden = true;
      return;
    }
    const service = err instanceof ServiceError ? err : null;
    const unreachable = !service || service.unreachable || service.status === 404;
    this.node.classList.toggle('dw-unreachable', unreachable);
    this.banner.textContent = unreachable
      ? `Job service unreachable (${service?.message ?? err}). Retrying every ${this.refreshSeconds}s; the rows below may be old.`
      : service.message;
    this.banner.hidden = false;
  }

  /** Show the jobs of the team filter, updating rows in place. */
  render(): void {
    this.updateFilter();
    const shown = byTeam(this.jobs, this.team);
    const keep = new Set(shown.map(j => j.id));
    for (const [id, row] of this.rows) {
      if (!keep.has(id)) {
        row.node.remove();
        this.rows.delete(id);
      }
    }
    let before: Element | null = this.list.firstElementChild;
    for (const job of shown) {
      let row = this.rows.get(job.id);
      if (!row) {
        row = new Row(job.id);
        this.rows.set(job.id, row);
      }
      const series = this.seriesOf(job);
      series.add(job);
      row.update(job, series.values, this.me?.admin ?? false);
      if (row.node !== before) {
        this.list.insertBefore(row.node, before);
      } else {
        before = before.nextElementSibling;
      }
    }
    const running = shown.filter(j => j.status === 'RUNNING').length;
    const firing = shown.reduce((n, j) => n + (j.alerts_firing || 0), 0);
    this.summary.textContent = shown.length
      ? `${shown.length} job${shown.length === 1 ? '' : 's'}, ${running} running${firing ? `, ${firing} alerts firing` : ''}`
      : 'No jobs yet: promote a notebook (its toolbar\u2019s Promote button) to start one.';
  }

  private updateFilter(): void {
    if (!this.me?.admin) {
      return;
    }
    const teams = [...new Set(this.jobs.map(j => j.team))].sort();
    const have = [...this.filter.options].slice(1).map(o => o.value);
    if (teams.join('\n') !== have.join('\n')) {
      this.filter.length = 1;
      for (const team of teams) {
        this.filter.add(new Option(team, team, false, team === this.team));
      }
    }
  }

  private seriesOf(job: Job): RateSeries {
    let series = this.series.get(job.id);
    if (!series) {
      series = new RateSeries(this.sparklineSize);
      series.run = job.run?.id ?? null;
      this.series.set(job.id, series);
      if (job.run) {
        series.run = ''; // seed from the run's progress
      }
    }
    return series;
  }

  /** Seed the series of running jobs whose run changed, a few requests at a time. */
  private seedSparklines(): void {
    const todo = byTeam(this.jobs, this.team).filter(
      j => j.run && this.series.get(j.id)?.stale(j) && !this.seeding.has(j.id)
    );
    const next = async (): Promise<void> => {
      const job = todo.shift();
      if (!job || this.isDisposed) {
        return;
      }
      this.seeding.add(job.id);
      try {
        const progress = await this.api.progress(job.id, this.sparklineSize);
        const series = this.series.get(job.id);
        series?.seed(job.run?.id ?? null, progress);
        series?.add(job);
        this.rows.get(job.id)?.spark(series?.values ?? []);
      } catch {
        // the next refresh tries again
      } finally {
        this.seeding.delete(job.id);
      }
      return next();
    };
    for (let i = 0; i < SEED_CONCURRENCY; i++) {
      void next();
    }
  }

  /** Scroll to a job's row and mark it for a moment (after a promotion). */
  async reveal(name: string): Promise<void> {
    await this.refresh();
    const job = this.jobs.find(j => j.name === name);
    if (job && this.team && job.team !== this.team) {
      this.team = this.filter.value = '';
      this.render();
    }
    const row = job && this.rows.get(job.id);
    if (row) {
      row.node.scrollIntoView({ block: 'nearest' });
      row.node.classList.add('dw-flash');
      window.setTimeout(() => row.node.classList.remove('dw-flash'), 3000);
    }
  }

  private onClick(event: MouseEvent): void {
    const target = (event.target as HTMLElement).closest('[data-action]') as HTMLElement | null;
    const item = target?.closest('.dw-job') as HTMLElement | null;
    const job = item && this.jobs.find(j => String(j.id) === item.dataset.jobId);
    if (!target || !job) {
      return;
    }
    const action = target.dataset.action!;
    if ((ACTIONS as string[]).includes(action)) {
      void this.act(job, action as Action);
    } else if (action === 'details') {
      this.actions.openDetails(job);
    } else if (action === 'logs') {
      this.actions.openLogs(job);
    } else if (action === 'health') {
      this.actions.openHealth(job);
    } else if (action === 'notebook') {
      this.actions.openNotebook(job);
    }
  }

  /** Stop, start or restart a job, after the user confirms. */
  async act(job: Job, action: Action): Promise<void> {
    if (this.confirmActions) {
      const answer = await showDialog({
        title: `${capital(action)} ${job.name}?`,
        body: confirmText(job, action),
        buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: capital(action) })]
      });
      if (!answer.button.accept) {
        return;
      }
    }
    try {
      await this.api.act(job.id, action);
    } catch (err) {
      await showDialog({
        title: `Could not ${action} ${job.name}`,
        body: err instanceof Error ? err.message : String(err),
        buttons: [Dialog.okButton()]
      });
    }
    await this.refresh();
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function confirmText(job: Job, action: Action): string {
  const where = `${job.name} (team ${job.team}, version ${job.version})`;
  if (action === 'stop') {
    return `Stop ${where}? It stops after its current micro-batch and keeps its checkpoint; start resumes from it.`;
  }
  if (action === 'restart') {
    return `Restart ${where}? Its run stops and a new run starts from the checkpoint.`;
  }
  return `Start ${where} from its checkpoint?`;
}

/** One job's row: built once, then only changed values are written. */
class Row {
  readonly node: HTMLLIElement;
  private cells: Record<string, HTMLElement> = {};
  private polyline: SVGPolylineElement;
  private last: Record<string, string> = {};

  constructor(id: number) {
    this.node = document.createElement('li');
    this.node.className = 'dw-job';
    this.node.dataset.jobId = String(id);
    this.node.innerHTML = `
      <div class="dw-job-line">
        <span class="dw-badge" data-cell="status"></span>
        <a class="dw-job-name" href="#" data-action="details" data-cell="name" title="Job details"></a>
        <span class="dw-alerts" data-cell="alerts" title="Alerts firing"></span>
        <span class="dw-team" data-cell="team"></span>
      </div>
      <div class="dw-job-line dw-metrics">
        <span data-cell="rates" title="Input / processed rows per second in the last micro-batch"></span>
        <span data-cell="behind" title="Kafka offsets behind the latest"></span>
        <svg class="dw-spark" width="60" height="16" viewBox="0 0 80 18" preserveAspectRatio="none" aria-label="Input rate, last batches"><polyline fill="none" stroke-width="1.2"></polyline></svg>
      </div>
      <div class="dw-job-line dw-job-actions">
        <button class="dw-button" data-action="stop" title="Stop the job">Stop</button>
        <button class="dw-button" data-action="start" title="Start the job">Start</button>
        <button class="dw-button" data-action="restart" title="Restart the job">Restart</button>
        <button class="dw-button" data-action="logs" title="Follow the job's log">Log</button>
        <button class="dw-button" data-action="health" title="The job's health page">Health</button>
        <button class="dw-button" data-action="notebook" title="Open the notebook this version came from">Notebook</button>
        <span class="dw-job-cluster" data-cell="cluster" title="Spark cluster"></span>
      </div>
      <div class="dw-error" data-cell="error" hidden></div>`;
    for (const cell of this.node.querySelectorAll<HTMLElement>('[data-cell]')) {
      this.cells[cell.dataset.cell!] = cell;
    }
    this.polyline = this.node.querySelector('polyline')!;
  }

  update(job: Job, rates: number[], admin: boolean): void {
    const m = job.metrics || {};
    const live = job.status === 'RUNNING';
    this.set('name', job.name);
    this.set('status', job.status);
    this.set('team', admin ? job.team : '');
    this.set('cluster', clusterOf(job));
    this.set('alerts', job.alerts_firing ? `\u{1F514} ${job.alerts_firing}` : '');
    this.set(
      'rates',
      live ? `in ${compact(m.input_rate)} \u00b7 out ${compact(m.processed_rate)} /s` : `v${job.version}`
    );
    this.set('behind', live ? `lag ${compact(m.offsets_behind_latest)}` : '');
    this.set('error', job.status === 'FAILED' ? (job.last_error ?? '') : '');
    this.cells.error.hidden = !this.cells.error.textContent;
    const badge = `dw-badge ${statusClass(job.status)}`;
    if (this.last.badge !== badge) {
      this.cells.status.className = this.last.badge = badge;
    }
    const enabled = ACTIONS.map(a => (canAct(a, job) ? '1' : '0')).join('');
    if (this.last.enabled !== enabled) {
      this.last.enabled = enabled;
      ACTIONS.forEach((a, i) => {
        (this.node.querySelector(`[data-action="${a}"]`) as HTMLButtonElement).disabled = enabled[i] === '0';
      });
    }
    this.node.dataset.status = job.status;
    this.node.dataset.name = job.name;
    this.node.dataset.cluster = clusterOf(job);
    this.spark(rates);
  }

  spark(rates: number[]): void {
    const points = sparkPoints(rates, 80, 18);
    if (this.last.points !== points) {
      this.polyline.setAttribute('points', (this.last.points = points));
    }
  }

  private set(cell: string, text: string): void {
    if (this.last[cell] !== text) {
      this.cells[cell].textContent = this.last[cell] = text;
    }
  }
}
