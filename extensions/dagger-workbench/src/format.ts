/**
 * Pure helpers of the UI (no DOM, no server): numbers and statuses as the panel shows
 * them, sparkline geometry, a job's series of recent rates, and a line diff of SQL.
 */
import { Job, Progress } from './types';

/** `1234.5` -> `1.2k`; null -> `-`. */
export function compact(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) {
    return '-';
  }
  const abs = Math.abs(value);
  if (abs >= 1e9) {
    return `${(value / 1e9).toFixed(1)}G`;
  }
  if (abs >= 1e6) {
    return `${(value / 1e6).toFixed(1)}M`;
  }
  if (abs >= 1e4) {
    return `${Math.round(value / 1e3)}k`;
  }
  if (abs >= 1e3) {
    return `${(value / 1e3).toFixed(1)}k`;
  }
  return abs >= 10 || Number.isInteger(value) ? `${Math.round(value)}` : value.toFixed(1);
}

/** The CSS modifier of a status badge (`RUNNING` -> `running`). */
/** A pinned schema version as the service names it (`null`: the bundled schemas). */
export function schemaVersion(pin: number | null | undefined): string {
  return pin === null || pin === undefined ? 'bundled' : String(pin);
}

/** The facts line under a job's name in its details. */
export function headFacts(job: Job): string {
  const m = job.metrics || {};
  return (
    `team ${job.team} \u00b7 v${job.version} \u00b7 schema version ${schemaVersion(job.schema_version)} \u00b7 ` +
    `cluster ${job.cluster ?? 'default'} \u00b7 in ${compact(m.input_rate)}/s \u00b7 ` +
    `behind ${compact(m.offsets_behind_latest)} \u00b7 ${job.alerts_firing} alerts firing`
  );
}

export function statusClass(status: string): string {
  return `dw-status-${status.toLowerCase().replace(/[^a-z]+/g, '-')}`;
}

/** Whether an action applies to a job in this status. */
export function canAct(action: 'stop' | 'start' | 'restart', job: Pick<Job, 'status' | 'desired'>): boolean {
  const running = job.desired === 'RUNNING' || ['RUNNING', 'STARTING'].includes(job.status);
  return action === 'start' ? !running : running || action === 'restart';
}

/** SVG polyline points of `values` in a `width` x `height` box (y grows downwards). */
export function sparkPoints(values: number[], width: number, height: number): string {
  if (values.length === 0) {
    return '';
  }
  const max = Math.max(...values);
  const min = Math.min(0, ...values);
  const span = max - min || 1;
  if (values.length === 1) {
    values = [values[0], values[0]]; // one batch: a flat line at its level
  }
  const step = width / (values.length - 1);
  return values
    .map((v, i) => {
      const x = i * step;
      const y = height - 1 - ((v - min) / span) * (height - 2);
      return `${round(x)},${round(y)}`;
    })
    .join(' ');
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/**
 * A job's recent input rates for its sparkline: seeded from its run's progress
 * (`jobs/JOB/progress`), then one point per new micro-batch the jobs list reports.
 */
export class RateSeries {
  private points: { batchAt: string; rate: number }[] = [];
  run: string | null = null;

  constructor(readonly size = 30) {}

  get values(): number[] {
    return this.points.map(p => p.rate);
  }

  /** Whether the series must be seeded again (a new run). */
  stale(job: Job): boolean {
    return (job.run?.id ?? null) !== this.run;
  }

  seed(run: string | null, progress: Progress[]): void {
    this.run = run;
    this.points = progress.slice(-this.size).map(p => ({ batchAt: String(p.time), rate: p.input_rate ?? 0 }));
  }

  /** Add the job's last batch if it is new; true when a point was added. */
  add(job: Job): boolean {
    const at = job.metrics?.last_batch_at;
    const rate = job.metrics?.input_rate;
    if (!at || rate === null || rate === undefined) {
      return false;
    }
    const last = this.points[this.points.length - 1];
    if (last && last.batchAt === at) {
      return false;
    }
    this.points.push({ batchAt: at, rate });
    if (this.points.length > this.size) {
      this.points.shift();
    }
    return true;
  }
}

/** The jobs an admin's team filter keeps ('' keeps all). */
export function byTeam<T extends { team: string }>(jobs: T[], team: string): T[] {
  return team ? jobs.filter(j => j.team === team) : jobs;
}

export type DiffLine = { kind: ' ' | '-' | '+'; text: string };

/** A line diff of `before` and `after` (longest common subsequence). */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ kind: ' ', text: a[i] });
      i++;
      j++;
    } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
      out.push({ kind: '-', text: a[i++] });
    } else {
      out.push({ kind: '+', text: b[j++] });
    }
  }
  return out;
}

/** The SQL of a spec's YAML (its `sql:` block), else the whole YAML. */
export function sqlOf(specYaml: string): string {
  const match = /^sql:[ \t]*\|[-+0-9]*[ \t]*\n((?:[ \t]+.*\n?|[ \t]*\n)*)/m.exec(specYaml);
  if (!match) {
    return specYaml;
  }
  const lines = match[1]
    .replace(/^\s*\n/, '')
    .replace(/\n+$/, '')
    .split('\n');
  const indent = Math.min(...lines.filter(l => l.trim()).map(l => l.length - l.trimStart().length));
  return lines.map(l => l.slice(indent)).join('\n');
}

/** `2026-11-24T08:00:03.123Z` -> `2026-11-24 08:00:03` (UTC, to the second). */
export function utc(stamp: string | number | null | undefined): string {
  if (stamp === null || stamp === undefined || stamp === '') {
    return '-';
  }
  const date = typeof stamp === 'number' ? new Date(stamp * 1000) : new Date(stamp);
  return Number.isNaN(date.getTime()) ? String(stamp) : date.toISOString().slice(0, 19).replace('T', ' ');
}
