// What the best-of-N arms changed alike: a title, one summary line per arm, then the hunks grouped by the arms
// that made them (all of them, some of them, one of them), each under its file and @@ line, coloured like
// `git diff`. The overlap is derived outside the views (src/bon/harvest/overlap.ts `armOverlap`, through a store or a
// selector): views may not reach src/bon, so the shape it needs is spelled here and `Overlap` fits it.
// A patch is untrusted model text, file names included (a quoted git path can hold any byte): every line goes
// through `printableLine` before Ink sees it.

import React from 'react';
import { Box, Text } from 'ink';
import { diffLineStyle, printableLine, type DiffLineStyle } from './DiffView.js';

export interface OverlapHunk {
  file: string;
  header: string;
  lines: readonly string[];
}

export interface OverlapArmSummary {
  hunks: number;
  shared: number;
  unique: number;
  files: readonly string[];
  added: number;
  removed: number;
}

/** The part of src/bon/harvest/overlap.ts's `Overlap` this view draws. */
export interface OverlapData {
  shared: readonly OverlapHunk[];
  partial: ReadonlyArray<{ hunk: OverlapHunk; arms: readonly number[] }>;
  unique: ReadonlyMap<number, readonly OverlapHunk[]>;
  perArm: ReadonlyMap<number, OverlapArmSummary>;
}

export interface OverlapLine {
  text: string;
  style: DiffLineStyle & { dim?: boolean };
}

export interface OverlapViewProps {
  overlap: OverlapData;
  /** The arms compared, in the order they are named. */
  arms: readonly number[];
  /** Lines shown below the title. */
  height: number;
  columns: number;
  /** First line of `overlapLines` shown; clamped so the window never runs past the end. */
  offset: number;
}

/** printableLine leaves \n alone (a patch line has none), but a decoded file name may carry one. */
function printable(text: string): string {
  return printableLine(text).replace(/\n/g, '�');
}

function isBinary(hunk: OverlapHunk): boolean {
  return hunk.header.startsWith('GIT binary patch') || hunk.header.startsWith('Binary files ');
}

function uniqueCount(overlap: OverlapData): number {
  let n = 0;
  for (const hunks of overlap.unique.values()) n += hunks.length;
  return n;
}

export function overlapTitle(overlap: OverlapData, arms: readonly number[]): string {
  const partial = overlap.partial.length > 0 ? ` · ${overlap.partial.length} in some` : '';
  return `── overlap of arms ${arms.join(', ')} · ${overlap.shared.length} shared${partial} · ${uniqueCount(overlap)} unique`;
}

function summaryLine(arm: number, summary: OverlapArmSummary | undefined): OverlapLine {
  if (!summary) return { text: `arm ${arm} · no patch`, style: { dim: true } };
  if (summary.hunks === 0) return { text: `arm ${arm} · empty patch`, style: { dim: true } };
  const hunks = `${summary.hunks} hunk${summary.hunks === 1 ? '' : 's'}`;
  const files = summary.files.map(printable).join(', ');
  return {
    text: `arm ${arm} · ${hunks} · ${summary.shared} shared · ${summary.unique} unique · +${summary.added} −${summary.removed} · ${files}`,
    style: {},
  };
}

function hunkLines(hunk: OverlapHunk): OverlapLine[] {
  const head: OverlapLine = {
    text: `${printable(hunk.file)}  ${printable(hunk.header)}`,
    style: { color: 'cyan', bold: true },
  };
  // A binary payload is base85 noise: its first line (`literal 1234`, `delta 56`) says enough.
  const body = isBinary(hunk) ? hunk.lines.slice(0, 1) : hunk.lines;
  return [
    head,
    ...body.map((line) => ({
      text: printable(line) || ' ',
      style: isBinary(hunk) ? { dim: true } : diffLineStyle(line),
    })),
  ];
}

function groupLines(title: string, hunks: readonly OverlapHunk[]): OverlapLine[] {
  if (hunks.length === 0) return [];
  return [{ text: `── ${title} (${hunks.length})`, style: { bold: true } }, ...hunks.flatMap(hunkLines)];
}

/**
 * Every line below the title: the arms' summaries, then "shared by all", each set of arms that share hunks
 * ("arms 1+3", in arm order), and "only arm N" in the order of `arms`. The caller windows it (and knows the total).
 */
export function overlapLines(overlap: OverlapData, arms: readonly number[]): OverlapLine[] {
  const out: OverlapLine[] = arms.map((arm) => summaryLine(arm, overlap.perArm.get(arm)));
  const anything = overlap.shared.length > 0 || overlap.partial.length > 0 || uniqueCount(overlap) > 0;
  if (!anything) return [...out, { text: '(no arm changed anything)', style: { dim: true } }];
  out.push(...groupLines('shared by all', overlap.shared));
  const bySet = new Map<string, { arms: readonly number[]; hunks: OverlapHunk[] }>();
  for (const { hunk, arms: holders } of overlap.partial) {
    const sorted = [...holders].sort((a, b) => a - b);
    const id = sorted.join('+');
    const group = bySet.get(id) ?? { arms: sorted, hunks: [] };
    group.hunks.push(hunk);
    bySet.set(id, group);
  }
  const sets = [...bySet.values()].sort((a, b) => compareArmSets(a.arms, b.arms));
  for (const set of sets) out.push(...groupLines(`arms ${set.arms.join('+')}`, set.hunks));
  for (const arm of arms) out.push(...groupLines(`only arm ${arm}`, overlap.unique.get(arm) ?? []));
  return out;
}

/** Sets of arms in a stable order, compared arm by arm like words: 1+2, then 1+2+3, then 1+3, then 2+3. */
function compareArmSets(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The first line shown: `offset`, but never so far that the window shows less than it could. */
export function clampOffset(offset: number, total: number, height: number): number {
  return Math.max(0, Math.min(offset, total - Math.max(1, height)));
}

export function OverlapView({ overlap, arms, height, columns, offset }: OverlapViewProps): React.JSX.Element {
  const lines = overlapLines(overlap, arms);
  const rows = Math.max(1, height);
  const first = clampOffset(offset, lines.length, rows);
  const shown = lines.slice(first, first + rows);
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end" bold>
        {overlapTitle(overlap, arms)}
      </Text>
      {shown.map((line, index) => (
        <Text
          key={first + index}
          wrap="truncate-end"
          color={line.style.color}
          bold={line.style.bold}
          dimColor={line.style.dim}
        >
          {line.text}
        </Text>
      ))}
    </Box>
  );
}
