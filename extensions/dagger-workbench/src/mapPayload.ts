/**
 * A map output as the Python side writes it (workbench/atlas/mime.py): deck.gl JSON of its
 * layers, a tooltip, a legend. Only data: the renderer builds every element with text, so an
 * untrusted notebook's map cannot run anything.
 */

export const MAP_MIME_TYPE = 'application/vnd.dagger-workbench.map+json';

export interface LegendBin {
  color: string;
  label: string;
  count: number;
}

export interface DeckJson {
  initialViewState: Record<string, number>;
  layers: any[];
  views?: any[];
}

export interface MapPayload {
  version: number;
  deck: string; // the DeckJson as text: one line in the notebook file
  tooltip?: { html?: string; style?: Record<string, string> } | boolean;
  background?: string;
  height?: number;
  legend?: { title: string; note: string; bins: LegendBin[] };
}

const COLOR = /^#[0-9a-fA-F]{6}$/;
const HEIGHTS = [120, 2000];

/** The payload and its deck.gl JSON, or an error saying what is wrong with them. */
export function readPayload(data: unknown): { payload: MapPayload; deck: DeckJson } {
  const payload = data as MapPayload;
  const problem = new Error('This map output has no layers: run its cell again.');
  if (!payload || typeof payload !== 'object' || typeof payload.deck !== 'string') {
    throw problem;
  }
  if (payload.version !== 1) {
    throw new Error(`This map output is version ${payload.version}; this extension draws version 1.`);
  }
  let deck: DeckJson;
  try {
    deck = JSON.parse(payload.deck);
  } catch {
    throw problem;
  }
  if (!deck || !Array.isArray(deck.layers)) {
    throw problem;
  }
  return { payload, deck };
}

/** The map's height in pixels, within reason. */
export function mapHeight(payload: MapPayload): number {
  const height = Number(payload.height) || 560;
  return Math.min(Math.max(height, HEIGHTS[0]), HEIGHTS[1]);
}

/** A CSS colour from the payload, or a neutral one. */
export function safeColor(value: unknown, fallback = '#ffffff'): string {
  return typeof value === 'string' && COLOR.test(value) ? value : fallback;
}

/** The columns a tooltip shows: the `{name}` fields of its template, in order. */
export function tooltipColumns(tooltip: MapPayload['tooltip']): string[] {
  if (!tooltip || typeof tooltip !== 'object' || typeof tooltip.html !== 'string') {
    return [];
  }
  const fields = tooltip.html.match(/\{[^{}]+\}/g) ?? [];
  return fields.map(field => field.slice(1, -1));
}

/** The tooltip's lines for one picked row: `name: value`. */
export function tooltipLines(columns: string[], row: Record<string, unknown>): [string, string][] {
  return columns.map(name => [name, row[name] === undefined || row[name] === null ? '' : String(row[name])]);
}
