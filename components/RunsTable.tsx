// The recent runs table of the cockpit home, drawn with plain Ink boxes (fixed column widths, every cell
// truncated). A narrow terminal drops the least useful columns first instead of wrapping rows; the ADW
// column takes the room that is left. Only the rows around the selection are drawn when they do not fit.
//
//     id        ADW          status        phases   tokens      cost  age
//   › a1b2c3d4  adw_build    ✗ failed      2/3       12k   $0.0412  3 min ago
//
// Pure view: rows, selection, clock and size come in as props.

import React from 'react';
import { Box, Text } from 'ink';
import type { RunRow, RunRowStatus } from '../state/homeStore.js';
import { formatAge, formatCost, formatTokens } from '../src/format.js';

export const RUN_STATUS_STYLE: Readonly<Record<RunRowStatus, { glyph: string; color: string }>> = {
  running: { glyph: '●', color: 'cyan' },
  green: { glyph: '✓', color: 'green' },
  failed: { glyph: '✗', color: 'red' },
  interrupted: { glyph: '■', color: 'yellow' },
  infrastructure: { glyph: '!', color: 'magenta' },
};

export type ColumnKey = 'id' | 'adw' | 'status' | 'phases' | 'tokens' | 'cost' | 'age';

interface Cell {
  text: string;
  color?: string;
}

interface Column {
  key: ColumnKey;
  title: string;
  width: number;
  align: 'left' | 'right';
  cell(row: RunRow, now: number): Cell;
}

const MARKER_WIDTH = 2; // '› '
const GAP = 2;
const ADW_MIN = 9;
const ADW_MAX = 20;

const COLUMNS: readonly Column[] = [
  { key: 'id', title: 'id', width: 8, align: 'left', cell: (row) => ({ text: row.adwId }) },
  { key: 'adw', title: 'ADW', width: ADW_MIN, align: 'left', cell: (row) => ({ text: row.adwName }) },
  {
    key: 'status',
    title: 'status',
    width: 16, // '! infrastructure'
    align: 'left',
    cell: (row) => ({ text: `${RUN_STATUS_STYLE[row.status].glyph} ${row.status}`, color: RUN_STATUS_STYLE[row.status].color }),
  },
  { key: 'phases', title: 'phases', width: 6, align: 'left', cell: (row) => ({ text: row.phases }) },
  { key: 'tokens', title: 'tokens', width: 6, align: 'right', cell: (row) => ({ text: formatTokens(row.tokens) }) },
  { key: 'cost', title: 'cost', width: 8, align: 'right', cell: (row) => ({ text: formatCost(row.cost) }) },
  { key: 'age', title: 'age', width: 10, align: 'left', cell: (row, now) => ({ text: formatAge(now - row.startedAt) }) },
];

/** Which columns go first when the terminal is too narrow: the figures, then the age; id and status stay. */
const DROP_ORDER: readonly ColumnKey[] = ['tokens', 'phases', 'age', 'cost', 'adw'];

export interface LaidColumn {
  key: ColumnKey;
  width: number;
}

function rowWidth(columns: readonly LaidColumn[]): number {
  return MARKER_WIDTH + columns.reduce((sum, column) => sum + column.width, 0) + GAP * Math.max(0, columns.length - 1);
}

/** The columns that fit in `width`, in display order, the ADW column widened into the room left over. */
export function layoutColumns(width: number): LaidColumn[] {
  let kept: LaidColumn[] = COLUMNS.map((column) => ({ key: column.key, width: column.width }));
  for (const key of DROP_ORDER) {
    if (rowWidth(kept) <= width) break;
    kept = kept.filter((column) => column.key !== key);
  }
  const room = width - rowWidth(kept);
  return kept.map((column) => (column.key === 'adw' ? { ...column, width: Math.min(ADW_MAX, ADW_MIN + Math.max(0, room)) } : column));
}

/** Fit a cell to its column: cut with an ellipsis, padded on the side its alignment asks. */
export function fitCell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const chars = [...text];
  const cut = chars.length > width ? `${chars.slice(0, Math.max(0, width - 1)).join('')}…` : text;
  return align === 'right' ? cut.padStart(width) : cut.padEnd(width);
}

/** The first row index to draw so that the selection stays visible, kept near the middle when scrolling. */
export function windowStart(count: number, selected: number, height: number): number {
  if (count <= height) return 0;
  return Math.max(0, Math.min(selected - Math.floor(height / 2), count - height));
}

const BY_KEY = new Map(COLUMNS.map((column) => [column.key, column]));

function RowLine({ row, selected, laid, now }: { row: RunRow; selected: boolean; laid: readonly LaidColumn[]; now: number }) {
  return (
    <Text wrap="truncate-end" inverse={selected} bold={selected}>
      {selected ? '› ' : '  '}
      {laid.map((column, index) => {
        const spec = BY_KEY.get(column.key);
        if (spec === undefined) return null;
        const cell = spec.cell(row, now);
        return (
          <React.Fragment key={column.key}>
            {index > 0 ? ' '.repeat(GAP) : ''}
            <Text color={cell.color}>{fitCell(cell.text, column.width, spec.align)}</Text>
          </React.Fragment>
        );
      })}
    </Text>
  );
}

export interface RunsTableProps {
  rows: readonly RunRow[];
  selected: number;
  now: number;
  columns: number;
  /** Row lines available for runs (the header line not counted). */
  height: number;
}

export function RunsTable({ rows, selected, now, columns, height }: RunsTableProps): React.JSX.Element {
  const laid = layoutColumns(columns);
  const visible = Math.max(1, height);
  const start = windowStart(rows.length, selected, visible);
  const shown = rows.slice(start, start + visible);
  const header = laid
    .map((column) => fitCell(BY_KEY.get(column.key)?.title ?? column.key, column.width, BY_KEY.get(column.key)?.align))
    .join(' '.repeat(GAP));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end" dimColor>{`${' '.repeat(MARKER_WIDTH)}${header}`}</Text>
      {shown.map((row, index) => (
        <RowLine key={row.adwId} row={row} selected={start + index === selected} laid={laid} now={now} />
      ))}
      {rows.length > shown.length ? (
        <Text dimColor wrap="truncate-end">{`  runs ${start + 1}–${start + shown.length} of ${rows.length}`}</Text>
      ) : null}
    </Box>
  );
}

/** Rows the table takes: header, the runs drawn, and the "runs x–y of n" line when some are hidden. */
export function runsTableHeight(count: number, height: number): number {
  const visible = Math.max(1, height);
  return 1 + Math.min(count, visible) + (count > visible ? 1 : 0);
}
