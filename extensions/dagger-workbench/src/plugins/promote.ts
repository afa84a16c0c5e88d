/**
 * Promote: a notebook toolbar button (shown on notebooks running the workbench kernel)
 * and a command-palette command; both save the notebook, open the promote dialog and end
 * on the new job in the daggers panel.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, ToolbarButton } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { WorkbenchAPI } from '../api';
import { CommandIDs, PluginIDs, WORKBENCH_KERNEL } from '../commands';
import { promoteWithDialog } from '../promoteDialog';
import { daggerIcon } from './daggers';

interface PromoteSettings {
  kernels: string[];
  team: string;
  cluster: string;
}

/** The kernel a notebook runs on (its session's, else its saved kernelspec's). */
export function kernelOf(panel: NotebookPanel): string {
  const live = panel.sessionContext.session?.kernel?.name;
  const saved = (panel.model?.getMetadata('kernelspec') as any)?.name;
  return live ?? saved ?? '';
}

export const promotePlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.promote,
  description: 'Promote a notebook on the workbench kernel to a production job.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null
  ) => {
    const api = new WorkbenchAPI(app.serviceManager.serverSettings);
    const settings: PromoteSettings = { kernels: [WORKBENCH_KERNEL], team: '', cluster: '' };
    const eligible = (panel: NotebookPanel | null): panel is NotebookPanel =>
      !!panel && settings.kernels.includes(kernelOf(panel));

    app.commands.addCommand(CommandIDs.promote, {
      label: 'Promote Notebook to a Dagger Job\u2026',
      caption: 'Run the notebook with papermill, check parity and start it as a job',
      icon: args => (args.toolbar ? daggerIcon : undefined),
      isEnabled: () => eligible(tracker.currentWidget),
      execute: async () => {
        const panel = tracker.currentWidget;
        if (!eligible(panel)) {
          return;
        }
        if (panel.context.model.dirty) {
          await panel.context.save();
        }
        const path = panel.context.path;
        const name = PathExt.basename(path, PathExt.extname(path));
        const job = await promoteWithDialog(api, {
          notebook: path,
          name,
          team: settings.team,
          cluster: settings.cluster
        });
        if (job) {
          await app.commands.execute(CommandIDs.reveal, { name: job });
        }
      }
    });
    palette?.addItem({ command: CommandIDs.promote, category: 'Dagger Workbench' });

    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (panel: NotebookPanel) => {
        const button = new ToolbarButton({
          icon: daggerIcon,
          label: 'Promote',
          tooltip: 'Promote this notebook to a production dagger job',
          className: 'dw-promote-button',
          onClick: () => {
            if (tracker.currentWidget !== panel) {
              app.shell.activateById(panel.id);
            }
            void app.commands.execute(CommandIDs.promote);
          }
        });
        const show = () => button.setHidden(!eligible(panel));
        panel.sessionContext.kernelChanged.connect(show);
        panel.sessionContext.ready.then(show, show);
        show();
        panel.toolbar.insertItem(10, 'dagger-promote', button);
        return button;
      }
    });

    if (registry) {
      void registry.load(PluginIDs.promote).then(loaded => {
        const apply = () => {
          settings.kernels = loaded.get('kernels').composite as string[];
          settings.team = loaded.get('team').composite as string;
          settings.cluster = loaded.get('cluster').composite as string;
        };
        apply();
        loaded.changed.connect(apply);
      });
    }
  }
};
