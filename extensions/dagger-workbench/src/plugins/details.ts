/** Job details: a main-area widget per job, opened from the daggers panel. */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { WorkbenchAPI } from '../api';
import { CommandIDs, jobArgs, PluginIDs } from '../commands';
import { JobDetails } from '../details';
import { daggerIcon } from './daggers';

export const detailsPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.details,
  description: "A job's versions, SQL diffs, rollback, events and alerts.",
  autoStart: true,
  optional: [ILayoutRestorer, ISettingRegistry],
  activate: (app: JupyterFrontEnd, restorer: ILayoutRestorer | null, registry: ISettingRegistry | null) => {
    const api = new WorkbenchAPI(app.serviceManager.serverSettings);
    const tracker = new WidgetTracker<MainAreaWidget<JobDetails>>({ namespace: 'dagger-details' });
    let refreshSeconds = 10;
    registry?.load(PluginIDs.details).then(
      settings => {
        const apply = () => {
          refreshSeconds = settings.get('refreshSeconds').composite as number;
          tracker.forEach(w => (w.content.refreshSeconds = refreshSeconds));
        };
        apply();
        settings.changed.connect(apply);
      },
      () => undefined
    );
    app.commands.addCommand(CommandIDs.openDetails, {
      label: args => `Details of ${args.name ?? 'a Dagger Job'}`,
      execute: args => {
        const job = jobArgs(args);
        const open = tracker.find(w => w.content.ref === job.id);
        if (open) {
          app.shell.activateById(open.id);
          return open.content.refresh();
        }
        const content = new JobDetails(api, job.id, {
          openNotebook: (j, version) =>
            void app.commands.execute(CommandIDs.openNotebook, { id: j.id, name: j.name, version }),
          openLogs: j => void app.commands.execute(CommandIDs.openLogs, { id: j.id, name: j.name })
        });
        content.refreshSeconds = refreshSeconds;
        const widget = new MainAreaWidget({ content });
        widget.id = `dagger-details-${job.id}`;
        widget.title.label = job.name;
        widget.title.icon = daggerIcon;
        widget.title.closable = true;
        content.title.changed.connect(() => (widget.title.label = content.title.label));
        void tracker.add(widget);
        app.shell.add(widget, 'main');
      }
    });
    if (restorer) {
      void restorer.restore(tracker, {
        command: CommandIDs.openDetails,
        args: w => ({ id: w.content.ref, name: w.title.label }),
        name: w => String(w.content.ref)
      });
    }
  }
};
