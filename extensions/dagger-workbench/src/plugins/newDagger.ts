/**
 * New dagger: a launcher card and a file-browser command that ask for a name and create
 * `NAME.ipynb` from the "new dagger" template (as `workbench new NAME`), on the workbench
 * kernel, then open it.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { newDaggerTemplate, WorkbenchAPI } from '../api';
import { CommandIDs, PluginIDs } from '../commands';
import { daggerIcon, listed } from './daggers';

/** A dagger name as the job service accepts it: letters, digits, `-` and `_`. */
export function validName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(name);
}

export const newDaggerPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.newDagger,
  description: 'Create a dagger notebook from the "new dagger" template.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ILauncher, IDefaultFileBrowser, ICommandPalette, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    docs: IDocumentManager,
    launcher: ILauncher | null,
    browser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null,
    registry: ISettingRegistry | null
  ) => {
    const api = new WorkbenchAPI(app.serviceManager.serverSettings);
    let defaultName = 'my-dagger';
    registry?.load(PluginIDs.newDagger).then(
      s => {
        defaultName = s.get('defaultName').composite as string;
        s.changed.connect(() => (defaultName = s.get('defaultName').composite as string));
      },
      () => undefined
    );

    const create = async (cwd: string): Promise<unknown> => {
      const asked = await InputDialog.getText({
        title: 'New dagger',
        label: 'Dagger name',
        text: defaultName
      });
      const name = asked.value?.trim();
      if (!asked.button.accept || !name) {
        return;
      }
      if (!validName(name)) {
        return showErrorMessage(
          'Not a dagger name',
          `'${name}': use letters, digits, '-' and '_', starting with a letter.`
        );
      }
      const path = PathExt.join(cwd, `${name}.ipynb`);
      try {
        if (await listed(app, cwd, path)) {
          return showErrorMessage('New dagger', `${path} exists: choose another name or remove it.`);
        }
        const content = await newDaggerTemplate(api, name);
        await app.serviceManager.contents.save(path, { type: 'notebook', format: 'json', content });
        return docs.openOrReveal(path);
      } catch (err) {
        return showErrorMessage('New dagger', err as Error);
      }
    };

    app.commands.addCommand(CommandIDs.newDagger, {
      label: args => (args.isLauncher ? 'New Dagger' : 'New Dagger Notebook\u2026'),
      caption: 'A notebook from the "new dagger" template: streams, SQL, preview',
      icon: daggerIcon,
      execute: args => create(String(args.cwd ?? browser?.model.path ?? ''))
    });
    app.commands.addCommand(CommandIDs.newDaggerHere, {
      label: 'New Dagger Notebook\u2026',
      icon: daggerIcon,
      execute: () => create(browser?.model.path ?? '')
    });
    launcher?.add({
      command: CommandIDs.newDagger,
      category: 'Dagger Workbench',
      rank: 1,
      args: { isLauncher: true }
    });
    app.contextMenu.addItem({
      command: CommandIDs.newDaggerHere,
      selector: '.jp-DirListing-content',
      rank: 1
    });
    palette?.addItem({ command: CommandIDs.newDagger, category: 'Dagger Workbench' });
  }
};
