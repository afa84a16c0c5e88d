/** The map output's mime renderer extension (`jupyterlab.mimeExtension` in package.json). */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { MAP_MIME_TYPE } from './mapPayload';
import { MapOutput } from './mapRenderer';

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true, // it draws data only: no script, no HTML from the output
  mimeTypes: [MAP_MIME_TYPE],
  defaultRank: 0,
  createRenderer: () => new MapOutput()
};

const extension: IRenderMime.IExtension = {
  id: '@dagger-workbench/lab:map-output',
  description: 'Atlas maps in notebooks, drawn with deck.gl with no kernel.',
  rendererFactory,
  rank: 0,
  dataType: 'json'
};

export default extension;
