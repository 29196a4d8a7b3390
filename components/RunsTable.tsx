// The recent runs table of the cockpit home, drawn with plain Ink boxes. The column model is the one
// `factory runs` prints (src/contract/runsTable.ts): fixed widths in display columns, a narrow terminal dropping
// the least useful columns first instead of wrapping rows, the ADW column taking the room that is left; every
// cell is cut and padded by display width (src/contract/text.ts), so a CJK or emoji name keeps the columns aligned.
// Only the rows around the selection are drawn when they do not fit.
//
//     id        ADW          status        phases   tokens      cost  age
//   › a1b2c3d4  adw_build    ✗ failed      2/3       12k   $0.0412  3 min ago
//
// Pure view: rows, selection, clock and size come in as props.

import React from 'react';
import { Box, Text } from 'ink';
import type { RunRow, RunRowStatus } from '../state/home/store.js';
import { runsCell, screenColumns, type RunsColumn } from '../src/contract/runsTable.js';
import { fitCell } from '../src/contract/text.js';

/** The colour of a run's status cell (its mark comes with the cell text). */
export const RUN_STATUS_COLOR: Readonly<Record<RunRowStatus, string>> = {
  running: 'cyan',
  green: 'green',
  failed: 'red',
  interrupted: 'yellow',
  infrastructure: 'magenta',
  budget: 'yellow',
};

const MARKER_WIDTH = 2; // '› '
const GAP = 2;

/** The first row index to draw so that the selection stays visible, kept near the middle when scrolling. */
export function windowStart(count: number, selected: number, height: number): number {
  if (count <= height) return 0;
  return Math.max(0, Math.min(selected - Math.floor(height / 2), count - height));
}

function RowLine({
  row,
  selected,
  laid,
  now,
}: {
  row: RunRow;
  selected: boolean;
  laid: readonly RunsColumn[];
  now: number;
}) {
  return (
    <Text wrap="truncate-end" inverse={selected} bold={selected}>
      {selected ? '› ' : '  '}
      {laid.map((column, index) => (
        <React.Fragment key={column.key}>
          {index > 0 ? ' '.repeat(GAP) : ''}
          <Text color={column.key === 'status' ? RUN_STATUS_COLOR[row.status] : undefined}>
            {fitCell(runsCell(column.key, row, now, 'screen'), column.width, column.align)}
          </Text>
        </React.Fragment>
      ))}
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
  const laid = screenColumns(columns, { marker: MARKER_WIDTH, gap: GAP });
  const visible = Math.max(1, height);
  const start = windowStart(rows.length, selected, visible);
  const shown = rows.slice(start, start + visible);
  const header = laid.map((column) => fitCell(column.title, column.width, column.align)).join(' '.repeat(GAP));
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
