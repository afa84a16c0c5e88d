/** Dagger Workbench in JupyterLab: one plugin per feature. */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { daggersPlugin } from './plugins/daggers';
import { detailsPlugin } from './plugins/details';
import { newDaggerPlugin } from './plugins/newDagger';
import { promotePlugin } from './plugins/promote';

const plugins: JupyterFrontEndPlugin<any>[] = [daggersPlugin, promotePlugin, newDaggerPlugin, detailsPlugin];

export default plugins;
