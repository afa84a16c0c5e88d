import { mapHeight, readPayload, safeColor, tooltipColumns, tooltipLines } from '../src/mapPayload';

const deck = JSON.stringify({ initialViewState: { latitude: -6.2, longitude: 106.8, zoom: 10 }, layers: [] });

describe('readPayload', () => {
  it('reads the deck.gl JSON the notebook keeps as one line of text', () => {
    const read = readPayload({ version: 1, deck, height: 400 });
    expect(read.deck.initialViewState.zoom).toBe(10);
    expect(mapHeight(read.payload)).toBe(400);
  });

  it('says what is wrong with an output it cannot draw', () => {
    expect(() => readPayload({ version: 1 })).toThrow('This map output has no layers: run its cell again.');
    expect(() => readPayload({ version: 1, deck: '{not json' })).toThrow('no layers');
    expect(() => readPayload({ version: 2, deck })).toThrow('version 2; this extension draws version 1');
  });
});

describe('the tooltip and legend take data, never markup', () => {
  it('shows the template fields of a row as text', () => {
    const columns = tooltipColumns({ html: '<b>tag_s2id</b>: {tag_s2id}<br/><b>bookings</b>: {bookings}' });
    expect(columns).toEqual(['tag_s2id', 'bookings']);
    expect(tooltipLines(columns, { tag_s2id: '3344469541378850816', bookings: 40, other: 1 })).toEqual([
      ['tag_s2id', '3344469541378850816'],
      ['bookings', '40']
    ]);
    expect(tooltipColumns(false)).toEqual([]);
  });

  it('keeps colours to #rrggbb and heights within reason', () => {
    expect(safeColor('#b10026')).toBe('#b10026');
    expect(safeColor('red;background:url(x)', '#cccccc')).toBe('#cccccc');
    expect(mapHeight({ version: 1, deck, height: 99999 })).toBe(2000);
  });
});
