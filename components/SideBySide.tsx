// Two arms' patches in two columns, aligned by file, by hunk and line by line (a diff of the two patches): a line
// both arms show faces itself (` = `), a line changed on both sides faces its counterpart (` ≠ `), a line only one
// arm has sits on its side with the other column blank. The rows come from src/bon/harvest/overlap.ts `sideBySide(left, right)`, computed outside the views (a
// view may not reach src/bon); the shape it needs is spelled here and `Row` fits it.
// Each column is cut to its width, never wrapped, so the two stay aligned; a patch is untrusted model text, so
// every cell goes through `printableLine` before it is measured or drawn.

import React from 'react';
import { Box, Text } from 'ink';
import { diffLineStyle, printableLine, type DiffLineStyle } from './DiffView.js';
import { fit, pad } from '../src/contract/text.js';

export interface SideBySideRow {
  kind: 'file' | 'same' | 'left' | 'right' | 'both-differ';
  left?: string;
  right?: string;
}

export interface SideBySideCell {
  /** Printable, cut and padded to the column's width exactly. */
  text: string;
  style: DiffLineStyle;
}

export interface SideBySideLine {
  kind: SideBySideRow['kind'];
  left: SideBySideCell;
  /** Three columns between the two: ` = ` the same line, ` ≠ ` a line each arm wrote otherwise, ` │ ` otherwise. */
  gutter: string;
  right: SideBySideCell;
}

export interface SideBySideProps {
  left: { arm: number };
  right: { arm: number };
  /** `sideBySide(leftPatch, rightPatch)`. */
  rows: readonly SideBySideRow[];
  /** Lines shown below the title. */
  height: number;
  columns: number;
  /** First line shown; clamped so the window never runs past the end. */
  offset: number;
}

const GUTTER_WIDTH = 3;
const GUTTERS: Record<SideBySideRow['kind'], string> = {
  file: ' │ ',
  same: ' = ',
  'both-differ': ' ≠ ',
  left: ' │ ',
  right: ' │ ',
};

/** Each column's width: what is left of the terminal after the gutter, halved (an odd column is left unused). */
export function sideColumnWidth(columns: number): number {
  return Math.max(0, Math.floor((columns - GUTTER_WIDTH) / 2));
}

function cell(text: string | undefined, width: number, file: boolean): SideBySideCell {
  if (text === undefined) return { text: ' '.repeat(width), style: {} };
  // printableLine leaves \n alone (a patch line has none), but a decoded file name may carry one.
  const printable = printableLine(text).replace(/\n/g, '�');
  return { text: pad(fit(printable, width), width), style: file ? { bold: true } : diffLineStyle(text) };
}

/** The rows as drawn lines, each exactly `2 × sideColumnWidth(columns) + 3` columns wide. */
export function sideBySideLines(rows: readonly SideBySideRow[], columns: number): SideBySideLine[] {
  const width = sideColumnWidth(columns);
  return rows.map((row) => ({
    kind: row.kind,
    left: cell(row.left, width, row.kind === 'file'),
    gutter: GUTTERS[row.kind],
    right: cell(row.right, width, row.kind === 'file'),
  }));
}

export function sideBySideTitle(left: number, right: number, offset: number, shown: number, total: number): string {
  return `── arm ${left} ⟷ arm ${right} · lines ${total === 0 ? 0 : offset + 1}–${offset + shown} of ${total}`;
}

export function SideBySide({ left, right, rows, height, columns, offset }: SideBySideProps): React.JSX.Element {
  const lines = sideBySideLines(rows, columns);
  const visible = Math.max(1, height);
  const first = Math.max(0, Math.min(offset, lines.length - visible));
  const shown = lines.slice(first, first + visible);
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end" bold>
        {sideBySideTitle(left.arm, right.arm, first, shown.length, lines.length)}
      </Text>
      {lines.length === 0 ? <Text dimColor>(neither arm changed anything)</Text> : null}
      {shown.map((line, index) => (
        <Text key={first + index} wrap="truncate-end">
          <Text color={line.left.style.color} bold={line.left.style.bold}>
            {line.left.text}
          </Text>
          <Text dimColor>{line.gutter}</Text>
          <Text color={line.right.style.color} bold={line.right.style.bold}>
            {line.right.text}
          </Text>
        </Text>
      ))}
    </Box>
  );
}
