// The runs table's one column model: `factory runs` prints it (columns as wide as their widest cell, in display
// columns), the cockpit home lays it out on a screen (figures dropped first, ADW widened into the room left).
import { describe, expect, it } from 'vitest';
import { formatRuns } from '../../src/commands/runs.js';
import { printedCells, printTable, runsCell, screenColumns, type RunsTableRow } from '../../src/contract/runsTable.js';
import { displayWidth, fitCell } from '../../src/contract/text.js';
import type { RunRow } from '../../src/trace/store.js';

const NOW = Date.UTC(2025, 0, 1, 12);
const MIN = 60_000;

function run(adwId: string, over: Partial<RunRow> = {}): RunRow {
  return {
    adwId,
    adwName: 'adw_prompt',
    status: 'green',
    phases: '2/2',
    phasesOk: 2,
    phasesTotal: 2,
    tokens: 12_345,
    cost: 0.0412,
    startedAt: NOW - 3 * MIN,
    ...over,
  };
}

describe('the printed runs table (factory runs)', () => {
  it('prints the titles, then one line per run, columns two spaces apart, no trailing blanks', () => {
    const text = formatRuns(
      [
        run('a1b2c3d4'),
        run('bbbb0002', {
          adwName: '',
          status: 'failed',
          phases: '0/2',
          tokens: 850,
          cost: 0.5,
          startedAt: NOW - 40_000,
        }),
      ],
      NOW,
    );
    expect(text).toBe(
      [
        'id        adw         status  phases  tokens  cost     age',
        'a1b2c3d4  adw_prompt  green   2/2     12k     $0.0412  3 min ago',
        'bbbb0002  ?           failed  0/2     850     $0.5000  40 s ago',
        '',
      ].join('\n'),
    );
    expect(formatRuns([], NOW)).toBe('no runs yet — try `factory demo` or `factory prompt "…"`\n');
  });

  it('lines wide names up by display width', () => {
    const lines = printTable(printedCells([run('a1b2c3d4', { adwName: '構築' }), run('bbbb0002')], NOW)).split('\n');
    const statusAt = (line: string) =>
      displayWidth(line.slice(0, line.indexOf(line.includes('green') ? 'green' : 'status')));
    expect(new Set(lines.map(statusAt)).size).toBe(1);
  });
});

describe('the screen layout (cockpit home)', () => {
  it('drops figures first; id and status always stay; ADW takes the room left, up to 20', () => {
    expect(screenColumns(120).map((c) => c.key)).toEqual(['id', 'adw', 'status', 'phases', 'tokens', 'cost', 'age']);
    expect(screenColumns(120).find((c) => c.key === 'adw')?.width).toBe(20);
    expect(screenColumns(70).map((c) => c.key)).toEqual(['id', 'adw', 'status', 'phases', 'cost', 'age']);
    expect(screenColumns(30).map((c) => c.key)).toEqual(['id', 'status']);
    expect(screenColumns(120).map((c) => c.title)).toEqual(['id', 'ADW', 'status', 'phases', 'tokens', 'cost', 'age']);
  });

  it('gives screen cells with the status mark, fitted to their columns by the text module', () => {
    const row: RunsTableRow = run('a1b2c3d4', { status: 'infrastructure', adwName: 'adw_something_long' });
    expect(runsCell('status', row, NOW, 'screen')).toBe('! infrastructure');
    expect(runsCell('status', row, NOW, 'print')).toBe('infrastructure');
    const laid = screenColumns(52); // 3 columns of room: ADW 12 wide
    const cells = laid.map((c) => fitCell(runsCell(c.key, row, NOW, 'screen'), c.width, c.align));
    expect(cells.map(displayWidth)).toEqual(laid.map((c) => c.width));
    expect(laid.map((c) => c.key)).toEqual(['id', 'adw', 'status', 'cost']);
    expect(cells).toEqual(['a1b2c3d4', 'adw_somethi…', '! infrastructure', ' $0.0412']);
  });
});
