/**
 * The daggers panel in the left sidebar, and the commands its rows use: follow a job's
 * log, open its health page, open the notebook its version came from.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, IFrame, MainAreaWidget, showErrorMessage } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { WorkbenchAPI } from '../api';
import { CommandIDs, jobArgs, PluginIDs } from '../commands';
import { logWidget } from '../logs';
import { DaggersPanel } from '../panel';

export const daggerIcon = new LabIcon({
  name: 'dagger-workbench:dagger',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><g class="jp-icon3" fill="#616161">' +
    '<path d="M12 1l2 3v11h-4V4z"/><rect x="6" y="15" width="12" height="2" rx="1"/>' +
    '<rect x="11" y="17" width="2" height="5"/></g></svg>'
});

export const daggersPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.daggers,
  description: "The team's dagger jobs in the left sidebar.",
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ILayoutRestorer, ISettingRegistry, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    docs: IDocumentManager,
    restorer: ILayoutRestorer | null,
    registry: ISettingRegistry | null,
    palette: ICommandPalette | null
  ) => {
    const api = new WorkbenchAPI(app.serviceManager.serverSettings);
    let versionsFolder = 'dagger-versions';
    const run = (id: string) => (job: { id: number; name: string; version?: number }) =>
      void app.commands.execute(id, { id: job.id, name: job.name, version: job.version ?? null } as any);
    const panel = new DaggersPanel({
      api,
      actions: {
        openDetails: run(CommandIDs.openDetails),
        openLogs: run(CommandIDs.openLogs),
        openHealth: run(CommandIDs.openHealth),
        openNotebook: run(CommandIDs.openNotebook)
      }
    });
    panel.title.icon = daggerIcon;
    app.shell.add(panel, 'left', { rank: 600 });
    restorer?.add(panel, 'dagger-workbench-panel');

    if (registry) {
      void registry.load(PluginIDs.daggers).then(settings => {
        const apply = () => {
          panel.refreshSeconds = settings.get('refreshSeconds').composite as number;
          panel.confirmActions = settings.get('confirmActions').composite as boolean;
          panel.sparklineSize = settings.get('sparklinePoints').composite as number;
          panel.clusters.probeSeconds = settings.get('kafkaProbeSeconds').composite as number;
          versionsFolder = settings.get('versionsFolder').composite as string;
        };
        apply();
        settings.changed.connect(apply);
      });
    }

    app.commands.addCommand(CommandIDs.showPanel, {
      label: 'Show the Daggers Panel',
      execute: () => app.shell.activateById(panel.id)
    });
    app.commands.addCommand(CommandIDs.refresh, {
      label: 'Refresh the Daggers Panel',
      execute: () => panel.refresh()
    });
    app.commands.addCommand(CommandIDs.reveal, {
      label: 'Show a Dagger Job in the Panel',
      execute: args => {
        app.shell.activateById(panel.id);
        return panel.reveal(String(args.name));
      }
    });
    app.commands.addCommand(CommandIDs.openLogs, {
      label: args => `Follow the Log of ${args.name ?? 'a Job'}`,
      execute: args => {
        const job = jobArgs(args);
        const id = `dagger-log-${job.id}`;
        const open = [...app.shell.widgets('main')].find(w => w.id === id);
        if (open) {
          app.shell.activateById(id);
          return;
        }
        app.shell.add(logWidget(api, job), 'main');
      }
    });
    app.commands.addCommand(CommandIDs.openHealth, {
      label: args => `Health of ${args.name ?? 'a Job'}`,
      execute: args => {
        const job = jobArgs(args);
        // the service's own page (same origin); scripts for its refresh
        const frame = new IFrame({ sandbox: ['allow-same-origin', 'allow-scripts'] });
        frame.url = api.pageUrl(`jobs/${encodeURIComponent(job.name)}/health`);
        const widget = new MainAreaWidget({ content: frame });
        widget.id = `dagger-health-${job.id}-${Date.now()}`;
        widget.title.label = `${job.name} health`;
        widget.title.closable = true;
        app.shell.add(widget, 'main');
      }
    });
    app.commands.addCommand(CommandIDs.openNotebook, {
      label: args => `Open the Notebook of ${args.name ?? 'a Job'}`,
      execute: async args => {
        const job = jobArgs(args);
        try {
          const version = job.version ?? (await api.job(job.id)).version;
          const path = PathExt.join(versionsFolder, `${job.name}-v${version}.ipynb`);
          await app.serviceManager.contents.save(versionsFolder, { type: 'directory' });
          if (!(await listed(app, versionsFolder, path))) {
            // a copy to edit: promoting it again makes the next version
            const content = await api.notebook(job.id, version);
            await app.serviceManager.contents.save(path, { type: 'notebook', format: 'json', content });
          }
          return docs.openOrReveal(path);
        } catch (err) {
          return showErrorMessage(`No notebook for ${job.name}`, err as Error);
        }
      }
    });
    palette?.addItem({ command: CommandIDs.showPanel, category: 'Dagger Workbench' });
    palette?.addItem({ command: CommandIDs.refresh, category: 'Dagger Workbench' });
  }
};

/** Whether `path` is in the folder `folder` (a listing: no 404 in the console). */
export async function listed(app: JupyterFrontEnd, folder: string, path: string): Promise<boolean> {
  const found = await app.serviceManager.contents.get(folder, { content: true });
  return (found.content as { path: string }[]).some(item => item.path === path);
}
