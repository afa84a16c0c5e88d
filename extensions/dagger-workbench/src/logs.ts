/**
 * A job's log in the main area, following it: `jobs/JOB/logs?offset=N` every second while
 * the run is live (the new text appended, scrolled to the end unless the user scrolled up);
 * once it ended, the job's next run (a restart) is followed when it starts.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { WorkbenchAPI } from './api';
import { Job } from './types';

const FOLLOW_MS = 1000;
/** How often an ended run's job is asked for a new run. */
const IDLE_MS = 5000;
/** Text kept on screen: a long-running job's log is trimmed from the top. */
const KEEP_CHARS = 2_000_000;

export class LogView extends Widget {
  private offset = 0;
  private run: string | null = null;
  private timer: number | undefined;
  private pre: HTMLPreElement;
  private state: HTMLElement;

  constructor(
    private api: WorkbenchAPI,
    readonly job: Pick<Job, 'id' | 'name'>
  ) {
    super();
    this.addClass('dw-log');
    this.node.innerHTML = '<div class="dw-log-state"></div><pre class="dw-log-text"></pre>';
    this.pre = this.node.querySelector('pre')!;
    this.state = this.node.querySelector('.dw-log-state')!;
  }

  protected onAfterAttach(): void {
    void this.poll();
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    super.dispose();
  }

  private async poll(): Promise<void> {
    if (this.isDisposed) {
      return;
    }
    let wait = FOLLOW_MS;
    try {
      const chunk = await this.api.logs(this.job.id, this.offset, this.run ?? undefined);
      this.append(chunk.text);
      this.offset = chunk.next_offset;
      if (chunk.run && this.run === null) {
        this.run = chunk.run;
      }
      if (!chunk.running && !chunk.text) {
        wait = IDLE_MS;
        await this.nextRun();
      }
      this.state.textContent = this.run
        ? `run ${this.run}${chunk.running ? ' \u00b7 following' : ' \u00b7 ended; a new run is followed when it starts'}`
        : 'no run yet';
    } catch (err) {
      wait = IDLE_MS;
      this.state.textContent = `log unavailable: ${err instanceof Error ? err.message : err}`;
    }
    if (!this.isDisposed) {
      this.timer = window.setTimeout(() => void this.poll(), wait);
    }
  }

  /** After a run ended: follow the job's latest run once it is another one. */
  private async nextRun(): Promise<void> {
    const latest = await this.api.logs(this.job.id, 0, undefined, 0); // which run, no text
    if (latest.run && latest.run !== this.run) {
      this.append(`\n--- run ${latest.run} ---\n`);
      this.run = latest.run;
      this.offset = 0;
    }
  }

  private append(text: string): void {
    if (!text) {
      return;
    }
    const node = this.node;
    const atEnd = node.scrollTop + node.clientHeight >= node.scrollHeight - 20;
    this.pre.appendChild(document.createTextNode(text));
    if ((this.pre.textContent?.length ?? 0) > KEEP_CHARS) {
      this.pre.textContent = this.pre.textContent!.slice(-KEEP_CHARS / 2);
    }
    if (atEnd) {
      node.scrollTop = node.scrollHeight;
    }
  }
}

export function logWidget(api: WorkbenchAPI, job: Pick<Job, 'id' | 'name'>): MainAreaWidget<LogView> {
  const widget = new MainAreaWidget({ content: new LogView(api, job) });
  widget.id = `dagger-log-${job.id}`;
  widget.title.label = `${job.name} log`;
  widget.title.closable = true;
  return widget;
}
