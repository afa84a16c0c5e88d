import {
  byTeam,
  canAct,
  compact,
  diffLines,
  headFacts,
  RateSeries,
  schemaVersion,
  sparkPoints,
  sqlOf,
  statusClass,
  utc
} from '../src/format';
import { job } from './jobs';

describe('compact', () => {
  it('shows rates as the panel does', () => {
    expect([null, 0, 3, 2.5, 42.4, 1234.5, 56789, 2.5e6].map(compact)).toEqual([
      '-',
      '0',
      '3',
      '2.5',
      '42',
      '1.2k',
      '57k',
      '2.5M'
    ]);
  });
});

describe('statusClass and canAct', () => {
  it('names the badge and enables the actions that apply', () => {
    expect(statusClass('RUNNING')).toBe('dw-status-running');
    const running = job();
    const stopped = job({ status: 'STOPPED', desired: 'STOPPED' });
    expect([canAct('stop', running), canAct('start', running), canAct('restart', running)]).toEqual([
      true,
      false,
      true
    ]);
    expect([canAct('stop', stopped), canAct('start', stopped)]).toEqual([false, true]);
  });
});

describe('sparkPoints', () => {
  it('spans the box, highest value at the top', () => {
    expect(sparkPoints([0, 10, 5], 80, 18)).toBe('0,17 40,1 80,9');
    expect(sparkPoints([], 80, 18)).toBe('');
    expect(sparkPoints([7], 80, 18)).toBe('0,1 80,1');
  });
});

describe('RateSeries', () => {
  it('is seeded per run, then grows by one point per new batch', () => {
    const series = new RateSeries(3);
    const first = job({ metrics: { last_batch_at: 't3', input_rate: 30 } });
    expect(series.stale(first)).toBe(true);
    series.seed(
      'r1',
      [1, 2].map(i => ({
        batch: i,
        time: i,
        input_rows: 0,
        input_rate: i * 10,
        processed_rate: 0,
        duration_ms: 0
      }))
    );
    expect(series.stale(first)).toBe(false);
    expect(series.add(first)).toBe(true);
    expect(series.add(first)).toBe(false);
    series.add(job({ metrics: { last_batch_at: 't4', input_rate: 40 } }));
    expect(series.values).toEqual([20, 30, 40]);
  });
});

describe('byTeam', () => {
  it('keeps one team, or all', () => {
    const jobs = [job(), job({ id: 2, team: 'supply' })];
    expect(byTeam(jobs, 'supply').map(j => j.id)).toEqual([2]);
    expect(byTeam(jobs, '')).toHaveLength(2);
  });
});

describe('diffLines and sqlOf', () => {
  it('diffs two versions of SQL line by line', () => {
    const v1 = 'name: a\nsql: |\n  SELECT a\n  FROM t\n  WHERE x\nsinks: []\n';
    const v2 = 'name: a\nsql: |\n  SELECT a, b\n  FROM t\n  WHERE x\n';
    expect(sqlOf(v1)).toBe('SELECT a\nFROM t\nWHERE x');
    expect(sqlOf('name: a\nsql: |2\n\n  SELECT 1\n    FROM t\nsinks: []\n')).toBe('SELECT 1\n  FROM t');
    expect(diffLines(sqlOf(v1), sqlOf(v2))).toEqual([
      { kind: '-', text: 'SELECT a' },
      { kind: '+', text: 'SELECT a, b' },
      { kind: ' ', text: 'FROM t' },
      { kind: ' ', text: 'WHERE x' }
    ]);
  });
});

describe('utc', () => {
  it('shows times in UTC to the second', () => {
    expect(utc('2026-11-24T08:00:03.123Z')).toBe('2026-11-24 08:00:03');
    expect(utc(0)).toBe('1970-01-01 00:00:00');
    expect(utc(null)).toBe('-');
  });
});

describe('schema versions', () => {
  it('shows the pin, or bundled without one', () => {
    expect([null, undefined, 0, 3].map(schemaVersion)).toEqual(['bundled', 'bundled', '0', '3']);
  });

  it("puts the job's pin in its details' facts", () => {
    const facts = headFacts(job({ version: 4, schema_version: 2, metrics: { input_rate: 1234.5 } }));
    expect(facts).toContain('v4 \u00b7 schema version 2 \u00b7 cluster default');
    expect(facts).toContain('in 1.2k/s');
    expect(headFacts(job())).toContain('schema version bundled');
  });
});
