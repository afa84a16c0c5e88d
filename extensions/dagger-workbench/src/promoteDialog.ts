/**
 * The promote dialog: a form (team, job name, cluster, schema version, parameters), then the promotion's
 * steps as the server runs them (papermill, parity with its diff when it fails, submit),
 * ending on the job.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { PromoteRequest, WorkbenchAPI } from './api';
import { schemaVersion, utc } from './format';
import { Me, Promotion, SchemaVersion } from './types';

const POLL_MS = 1000;

export interface PromoteDefaults {
  notebook: string;
  name: string;
  team: string;
  cluster: string;
}

/** The form's fields; `values()` is the request. */
export class PromoteForm extends Widget {
  constructor(
    private defaults: PromoteDefaults,
    me: Me | null,
    schemas: SchemaVersion[] = []
  ) {
    super();
    this.addClass('dw-promote-form');
    const teams = me?.teams ?? [];
    const team = defaults.team || (teams.length === 1 && !me?.admin ? teams[0] : '');
    this.node.innerHTML = `
      <p class="dw-hint">Runs <code></code> again in a fresh kernel, checks the production plan
      gives the preview's rows, then starts the job (a new version if the name exists).</p>
      <label>Team <input name="team" list="dw-teams" required></label>
      <datalist id="dw-teams"></datalist>
      <label>Job name <input name="name" required></label>
      <label>Cluster <input name="cluster" placeholder="the service's default"></label>
      <label>Schema version <select name="schema_version"></select></label>
      <label>Parameters (YAML, one <code>key: value</code> a line)
        <textarea name="parameters" rows="4" placeholder="sinks: [{type: log}]"></textarea></label>`;
    this.node.querySelector('.dw-hint code')!.textContent = defaults.notebook;
    this.input('team').value = team;
    this.input('name').value = defaults.name;
    this.input('cluster').value = defaults.cluster;
    const list = this.node.querySelector('datalist')!;
    for (const t of teams) {
      list.appendChild(new Option(t, t));
    }
    const pins = this.node.querySelector('select')!;
    for (const [label, value] of schemaChoices(schemas)) {
      pins.appendChild(new Option(label, value));
    }
  }

  private input(name: string): HTMLInputElement {
    return this.node.querySelector(`[name="${name}"]`) as HTMLInputElement;
  }

  getValue(): PromoteRequest {
    const text = this.input('parameters').value.trim();
    const pin = (this.node.querySelector('select') as HTMLSelectElement).value;
    return {
      notebook: this.defaults.notebook,
      team: this.input('team').value.trim(),
      name: this.input('name').value.trim() || undefined,
      cluster: this.input('cluster').value.trim() || undefined,
      parameters: text ? (text as any) : undefined,
      schema_version: pin ? Number(pin) : undefined
    };
  }
}

/**
 * The schema version choices (label, value): the latest first (value '': the service pins
 * it), then each published one, newest first; with none published, the bundled schemas.
 */
export function schemaChoices(versions: SchemaVersion[]): [string, string][] {
  const newest = versions.slice().reverse();
  if (!newest.length) {
    return [['bundled (no version published)', '']];
  }
  const named = (v: SchemaVersion): string =>
    `${v.number} \u00b7 ${v.author}${v.note ? ` \u00b7 ${v.note}` : ''}`;
  return [
    [`latest: ${named(newest[0])}`, ''],
    ...newest.map(v => [named(v), String(v.number)] as [string, string])
  ];
}

/** The steps of a running promotion, polled until it ends. */
export class PromoteProgress extends Widget {
  private steps: HTMLOListElement;
  private outcome: HTMLElement;
  private timer: number | undefined;
  /** Resolves with the promotion once it is done or failed. */
  readonly finished: Promise<Promotion>;
  private finish!: (p: Promotion) => void;

  constructor(
    private api: WorkbenchAPI,
    private request: PromoteRequest
  ) {
    super();
    this.addClass('dw-promote-progress');
    this.node.innerHTML = `<ol class="dw-steps"></ol><div class="dw-outcome"></div>`;
    this.steps = this.node.querySelector('ol')!;
    this.outcome = this.node.querySelector('.dw-outcome')!;
    this.finished = new Promise(resolve => (this.finish = resolve));
    void this.start();
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private async start(): Promise<void> {
    this.addStep('request', `promoting ${this.request.notebook} for team ${this.request.team}\u2026`);
    try {
      this.follow(await this.api.promote(this.request));
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err), null);
    }
  }

  private follow(promotion: Promotion): void {
    this.display(promotion);
    if (promotion.state === 'running') {
      this.timer = window.setTimeout(async () => {
        try {
          this.follow(await this.api.promotion(promotion.id));
        } catch (err) {
          this.fail(err instanceof Error ? err.message : String(err), null);
        }
      }, POLL_MS);
    } else {
      this.finish(promotion);
    }
  }

  private display(promotion: Promotion): void {
    const items = this.steps.children;
    promotion.steps.forEach((step, i) => {
      const text = `${utc(step.time).slice(11)} ${step.text}`;
      if (items[i + 1]) {
        items[i + 1].textContent = text;
      } else {
        this.addStep(step.name, text);
      }
    });
    this.node.dataset.state = promotion.state;
    if (promotion.state === 'failed') {
      this.fail(promotion.error?.message ?? 'the promotion failed', promotion.diff);
    } else if (promotion.state === 'done' && promotion.job) {
      const job = promotion.job;
      this.outcome.className = 'dw-outcome dw-ok';
      const pin = schemaVersion(job.schema_version);
      this.outcome.textContent = `job ${job.name}: version ${job.version} on schema version ${pin}, ${job.status}`;
    } else {
      this.outcome.textContent = 'running\u2026';
    }
  }

  private addStep(name: string, text: string): void {
    const item = document.createElement('li');
    item.dataset.step = name;
    item.textContent = text;
    this.steps.appendChild(item);
  }

  private fail(message: string, diff: string | null): void {
    this.node.dataset.state = 'failed';
    this.outcome.className = 'dw-outcome dw-failed';
    // a parity failure: its first line above, the differing rows below
    const [head, ...rows] = (diff ?? message).split('\n');
    this.outcome.textContent = diff ? head : message;
    if (diff && rows.length) {
      const pre = document.createElement('pre');
      pre.className = 'dw-diff';
      pre.textContent = rows.join('\n');
      this.outcome.appendChild(pre);
    }
    this.finish({ id: '', state: 'failed', steps: [], error: { type: 'Error', message }, diff, job: null });
  }
}

/**
 * Ask for the promotion's fields, run it showing its steps; resolves with the job's name
 * when a job was started (null when cancelled or failed).
 */
export async function promoteWithDialog(
  api: WorkbenchAPI,
  defaults: PromoteDefaults
): Promise<string | null> {
  let me: Me | null = null;
  let schemas: SchemaVersion[] = [];
  try {
    schemas = await api.schemaVersions();
  } catch {
    // offered as the latest; the promotion pins it
  }
  try {
    me = await api.me();
    if (me.admin && !me.teams.length) {
      // an admin in no team: offer the teams that have jobs
      me = { ...me, teams: [...new Set((await api.jobs()).map(j => j.team))].sort() };
    }
  } catch {
    // the form still opens; the promotion says what is wrong
  }
  const form = await showDialog({
    title: 'Promote to a production job',
    body: new PromoteForm(defaults, me, schemas),
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Promote' })],
    focusNodeSelector: 'input[name="team"]'
  });
  if (!form.button.accept || !form.value) {
    return null;
  }
  const progress = new PromoteProgress(api, form.value);
  const dialog = new Dialog({
    title: `Promoting ${defaults.notebook}`,
    body: progress,
    buttons: [Dialog.okButton({ label: 'Close' })]
  });
  void dialog.launch();
  const promotion = await progress.finished;
  return promotion.state === 'done' && promotion.job ? promotion.job.name : null;
}
