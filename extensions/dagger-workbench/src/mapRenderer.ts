/**
 * The map output's renderer: deck.gl (shipped in this extension) draws the layers of a
 * `application/vnd.dagger-workbench.map+json` output, so a saved notebook shows its maps
 * with no kernel. The legend sits beside the map.
 */
import { Deck, MapView } from '@deck.gl/core';
import { JSONConfiguration, JSONConverter } from '@deck.gl/json';
import { GeoJsonLayer, PolygonLayer, TextLayer } from '@deck.gl/layers';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import {
  DeckJson,
  MAP_MIME_TYPE,
  MapPayload,
  mapHeight,
  readPayload,
  safeColor,
  tooltipColumns,
  tooltipLines
} from './mapPayload';

const converter = new JSONConverter({
  configuration: new JSONConfiguration({ classes: { MapView, GeoJsonLayer, PolygonLayer, TextLayer } })
});

export class MapOutput extends Widget implements IRenderMime.IRenderer {
  private deck: Deck<any> | null = null;

  constructor() {
    super();
    this.addClass('dw-map-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.deck?.finalize();
    this.deck = null;
    this.node.textContent = '';
    let payload: MapPayload, deck: DeckJson;
    try {
      ({ payload, deck } = readPayload(model.data[MAP_MIME_TYPE]));
    } catch (err) {
      this.node.appendChild(text('div', String((err as Error).message), 'dw-map-problem'));
      return;
    }
    const map = document.createElement('div');
    map.className = 'dw-map-canvas';
    map.style.height = `${mapHeight(payload)}px`;
    map.style.background = safeColor(payload.background);
    this.node.appendChild(map);
    if (payload.legend) {
      this.node.appendChild(legend(payload.legend));
    }
    const columns = tooltipColumns(payload.tooltip);
    const props = converter.convert(deck);
    this.deck = new Deck({
      ...props,
      parent: map,
      width: '100%',
      height: '100%',
      getTooltip: ({ object }: { object?: Record<string, unknown> }) =>
        object && columns.length ? { html: tooltipHtml(columns, object), className: 'dw-map-tooltip' } : null
    });
  }

  protected onBeforeDetach(): void {
    this.deck?.finalize();
    this.deck = null;
  }
}

function text(tag: string, content: string, className?: string): HTMLElement {
  const element = document.createElement(tag);
  element.textContent = content;
  if (className) {
    element.className = className;
  }
  return element;
}

function tooltipHtml(columns: string[], row: Record<string, unknown>): string {
  const box = document.createElement('div');
  for (const [name, value] of tooltipLines(columns, row)) {
    const line = document.createElement('div');
    line.append(text('b', name), `: ${value}`);
    box.appendChild(line);
  }
  return box.innerHTML;
}

function legend(data: NonNullable<MapPayload['legend']>): HTMLElement {
  const aside = text('aside', '', 'dw-map-legend');
  aside.append(text('h3', data.title), text('div', data.note, 'dw-map-note'));
  if (!data.bins.length) {
    aside.appendChild(text('p', 'no results'));
    return aside;
  }
  const table = document.createElement('table');
  for (const bin of data.bins) {
    const row = table.insertRow();
    const swatch = text('span', '', 'dw-map-swatch');
    swatch.style.background = safeColor(bin.color, '#cccccc');
    row.insertCell().appendChild(swatch);
    row.insertCell().textContent = bin.label;
    const count = row.insertCell();
    count.className = 'dw-map-count';
    count.textContent = bin.count.toLocaleString('en');
  }
  aside.appendChild(table);
  return aside;
}
