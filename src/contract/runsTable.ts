// The runs table's columns, once, for both tables that show it: `factory runs` prints it (every column, each as
// wide as its widest cell) and the cockpit home draws it (fixed widths; a narrow terminal drops the least useful
// columns first and the ADW column takes the room left). Pure: no store, no screen; widths are display columns.
import { formatAge, formatCost, formatTokens } from './format.js';
import { displayWidth, pad } from './text.js';

export type RunsColumnKey = 'id' | 'adw' | 'status' | 'phases' | 'tokens' | 'cost' | 'age';

/** What the table shows of a run: the trace store's RunRow and the home store's both have these fields. */
export interface RunsTableRow {
  adwId: string;
  adwName: string;
  status: string;
  /** Phases done over phases planned, e.g. "2/3". */
  phases: string;
  tokens: number;
  cost: number;
  /** Milliseconds since the epoch. */
  startedAt: number;
}

/** `print`: `factory runs` (plain words, read by scripts too); `screen`: the cockpit home (status marks). */
export type RunsTableStyle = 'print' | 'screen';

/** The mark a screen shows before a run's status (the view gives it its colour). */
export const RUN_STATUS_MARK: Readonly<Record<string, string>> = {
  running: '●',
  green: '✓',
  failed: '✗',
  interrupted: '■',
  infrastructure: '!',
  budget: '$',
};

export interface RunsColumn {
  key: RunsColumnKey;
  title: string;
  align: 'left' | 'right';
  /** Display columns. */
  width: number;
}

interface ColumnSpec extends RunsColumn {
  /** The title on a screen, when it differs. */
  screenTitle?: string;
  text(row: RunsTableRow, now: number, style: RunsTableStyle): string;
}

const ADW_MIN = 9;
const ADW_MAX = 20;

/** In display order; `width` is the width on a screen. */
const COLUMNS: readonly ColumnSpec[] = [
  { key: 'id', title: 'id', align: 'left', width: 8, text: (row) => row.adwId },
  {
    key: 'adw',
    title: 'adw',
    screenTitle: 'ADW',
    align: 'left',
    width: ADW_MIN,
    text: (row, _now, style) => (style === 'print' ? row.adwName || '?' : row.adwName),
  },
  {
    key: 'status',
    title: 'status',
    align: 'left',
    width: 16, // '! infrastructure'
    text: (row, _now, style) =>
      style === 'screen' ? `${RUN_STATUS_MARK[row.status] ?? '?'} ${row.status}` : row.status,
  },
  { key: 'phases', title: 'phases', align: 'left', width: 6, text: (row) => row.phases },
  { key: 'tokens', title: 'tokens', align: 'right', width: 6, text: (row) => formatTokens(row.tokens) },
  { key: 'cost', title: 'cost', align: 'right', width: 8, text: (row) => formatCost(row.cost) },
  { key: 'age', title: 'age', align: 'left', width: 10, text: (row, now) => formatAge(now - row.startedAt) },
];

const BY_KEY = new Map(COLUMNS.map((column) => [column.key, column]));

/** Which columns go first when a screen is too narrow: the figures, then the age; id and status stay. */
const DROP_ORDER: readonly RunsColumnKey[] = ['tokens', 'phases', 'age', 'cost', 'adw'];

/** A cell's text, before any fitting. */
export function runsCell(key: RunsColumnKey, row: RunsTableRow, now: number, style: RunsTableStyle): string {
  return BY_KEY.get(key)!.text(row, now, style);
}

export interface ScreenLayout {
  /** Columns before the first cell (the selection marker). */
  marker: number;
  /** Columns between two cells. */
  gap: number;
}

function rowWidth(columns: readonly RunsColumn[], layout: ScreenLayout): number {
  return (
    layout.marker +
    columns.reduce((sum, column) => sum + column.width, 0) +
    layout.gap * Math.max(0, columns.length - 1)
  );
}

/** The columns a screen `width` columns wide shows, in display order, the ADW column widened into the room left. */
export function screenColumns(width: number, layout: ScreenLayout = { marker: 2, gap: 2 }): RunsColumn[] {
  let kept: RunsColumn[] = COLUMNS.map(({ key, screenTitle, title, align, width: w }) => ({
    key,
    title: screenTitle ?? title,
    align,
    width: w,
  }));
  for (const key of DROP_ORDER) {
    if (rowWidth(kept, layout) <= width) break;
    kept = kept.filter((column) => column.key !== key);
  }
  const room = width - rowWidth(kept, layout);
  return kept.map((column) =>
    column.key === 'adw' ? { ...column, width: Math.min(ADW_MAX, ADW_MIN + Math.max(0, room)) } : column,
  );
}

/** The printed table as cells: the titles, then one line of cells per run (every column, plain words). */
export function printedCells(rows: readonly RunsTableRow[], now: number): string[][] {
  return [
    COLUMNS.map((column) => column.title),
    ...rows.map((row) => COLUMNS.map((column) => column.text(row, now, 'print'))),
  ];
}

/** Cells laid out in columns as wide as their widest cell, two spaces apart, left-aligned; no trailing blanks. */
export function printTable(cells: readonly (readonly string[])[]): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => displayWidth(r[i]!))));
  return cells
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
