// The arms board of a best-of-N run: one column per arm, side by side, live while the arm runs.
//
//   ╭──────────────────────╮╭──────────────────────╮
//   │ ▸ #1 arm_2 ★ winner  ││ #2 arm_3             │
//   │ scripted/cheap       ││ scripted/pricey      │
//   │ ✓ green              ││ ✓ green              │
//   │ turns 3              ││ turns 4              │
//   │ …                    ││ …                    │
//   ╰──────────────────────╯╰──────────────────────╯
//   primer: 2.1k tokens, $0.0050, paid once — cold it would have been paid 3 times: ~4.2k more tokens
//   why #1: arm_2 is green and cheapest: $0.0021 vs $0.0034 for arm_3 (-38%)
//
// The selected arm has a cyan border and ▸. A narrow terminal gets fewer columns per row (the arms wrap
// onto more rows, balanced) and every line truncates. Pure view: the arms come from `armsOf`.

import React from 'react';
import { Box, Text } from 'ink';
import type { ArmStatus, ArmView, WhyFirstLine } from '../state/bonStore.js';
import { formatCost, formatSeconds, formatTokens } from '../src/format.js';
import { Spinner } from './Spinner.js';
import { statusColor, statusGlyph, TOOL_GLYPH } from './theme.js';

/** Narrowest column worth drawing (border and padding included). */
export const MIN_ARM_COLUMN = 24;
/** Lines inside a column, plus its two border lines. */
const ARM_LINES = 11;
export const ARM_COLUMN_HEIGHT = ARM_LINES + 2;

const armColor: Readonly<Record<ArmStatus, string>> = {
  pending: statusColor.pending,
  running: statusColor.running,
  green: statusColor.ok,
  red: statusColor.failed,
  aborted: statusColor.retrying,
  crashed: statusColor.failed,
};

/** 900 → "900 B", 1536 → "1.5 KB", 2_500_000 → "2.4 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * How the arms are laid out: as many per row as fit, balanced over the rows they need — but never more rows than
 * `maxRows` (the height the screen has): narrower cards, their lines cut, rather than a board taller than the
 * terminal, which pushes the header out of sight.
 */
export function boardLayout(arms: number, columns: number, maxRows = Infinity): { perRow: number; rows: number; width: number } {
  if (arms === 0) return { perRow: 0, rows: 0, width: columns };
  const fit = Math.max(1, Math.floor(columns / MIN_ARM_COLUMN));
  const rows = Math.max(1, Math.min(Math.ceil(arms / Math.min(fit, arms)), Math.floor(maxRows)));
  const perRow = Math.ceil(arms / rows);
  return { perRow, rows, width: Math.max(1, Math.floor(columns / perRow)) };
}

/** Rows the board occupies: the arm rows, then the primer line and the why line when present. */
export function armsBoardHeight(arms: number, columns: number, footerLines: number, maxRows?: number): number {
  return boardLayout(arms, columns, maxRows).rows * ARM_COLUMN_HEIGHT + footerLines;
}

/** The column's title: selection mark, rank, arm, winner star. */
export function armTitle(arm: ArmView, selected: boolean): string {
  const mark = selected ? '▸ ' : '';
  const rank = arm.rank !== undefined ? `#${arm.rank} ` : '';
  return `${mark}${rank}arm_${arm.arm}${arm.winner ? ' ★ winner' : ''}`;
}

function StateLine({ arm, now }: { arm: ArmView; now: number }): React.JSX.Element {
  if (arm.status === 'running') {
    return (
      <Text wrap="truncate-end">
        <Spinner now={now} color={statusColor.running} /> {arm.aborting ? 'aborting…' : 'running'}
      </Text>
    );
  }
  const glyph = arm.status === 'green' ? statusGlyph.ok : arm.status === 'pending' ? statusGlyph.pending : statusGlyph.failed;
  return (
    <Text wrap="truncate-end" color={armColor[arm.status]}>
      {`${glyph} ${arm.status}`}
    </Text>
  );
}

function Chips({ arm }: { arm: ArmView }): React.JSX.Element {
  if (arm.gates.length === 0) return <Text dimColor>gates —</Text>;
  return (
    <Text wrap="truncate-end">
      {arm.gates.map((gate, index) => (
        <React.Fragment key={gate.gate}>
          {index > 0 ? ' ' : ''}
          <Text color={gate.ok ? statusColor.ok : statusColor.failed}>{gate.ok ? statusGlyph.ok : statusGlyph.failed}</Text>
          {` ${gate.gate}`}
        </React.Fragment>
      ))}
    </Text>
  );
}

function Verdict({ arm }: { arm: ArmView }): React.JSX.Element {
  if (arm.status === 'green') return <Text color={statusColor.ok}>verdict green</Text>;
  if (arm.motif !== undefined) {
    return (
      <Text wrap="truncate-end" color={armColor[arm.status]}>
        {`↳ ${arm.motif}`}
      </Text>
    );
  }
  return <Text dimColor>verdict —</Text>;
}

function ArmColumn({ arm, selected, width, now }: { arm: ArmView; selected: boolean; width: number; now: number }) {
  const muted = arm.status === 'pending';
  const patch = arm.patch
    ? `patch ${formatBytes(arm.patch.bytes)} · ${arm.patch.files.length} file${arm.patch.files.length === 1 ? '' : 's'}`
    : 'patch —';
  return (
    <Box width={width} flexDirection="column" borderStyle="round" borderColor={selected ? 'cyan' : 'gray'} paddingX={1}>
      <Text wrap="truncate-end" bold color={selected ? 'cyan' : undefined}>
        {armTitle(arm, selected)}
      </Text>
      <Text wrap="truncate-end" color="magenta">
        {arm.model ?? 'default model'}
      </Text>
      <StateLine arm={arm} now={now} />
      <Text wrap="truncate-end" dimColor={muted}>{`turns ${arm.turns}`}</Text>
      <Text wrap="truncate-end" dimColor={muted}>{`tokens ${formatTokens(arm.tokens)}`}</Text>
      <Text wrap="truncate-end" dimColor={muted}>{`cost ${formatCost(arm.cost)}`}</Text>
      <Text wrap="truncate-end" dimColor={muted}>{`time ${arm.seconds !== undefined ? formatSeconds(arm.seconds) : '—'}`}</Text>
      <Text wrap="truncate-end" dimColor={arm.patch === undefined}>
        {patch}
      </Text>
      <Chips arm={arm} />
      <Verdict arm={arm} />
      <Text wrap="truncate-end" dimColor>
        {`${TOOL_GLYPH} ${arm.lastTool ?? '—'}`}
      </Text>
    </Box>
  );
}

export interface ArmsBoardProps {
  arms: readonly ArmView[];
  selected?: number;
  columns: number;
  now: number;
  /** The primer's line, kept apart from the arms' figures (each arm's cost is its own). */
  primer?: string;
  /** The one-line "why #1", once the harvest ranked the arms: green when there is a winner. */
  why?: WhyFirstLine;
  /** Rows of cards the screen has room for (boardLayout). */
  maxRows?: number;
}

export function ArmsBoard({ arms, selected, columns, now, primer, why, maxRows }: ArmsBoardProps): React.JSX.Element {
  const { perRow, width } = boardLayout(arms.length, columns, maxRows);
  const rows: ArmView[][] = [];
  for (let index = 0; index < arms.length; index += Math.max(1, perRow)) rows.push(arms.slice(index, index + perRow));
  return (
    <Box flexDirection="column" width={columns}>
      {arms.length === 0 ? <Text dimColor>arms: waiting for the primer…</Text> : null}
      {rows.map((row, index) => (
        <Box key={index} flexDirection="row">
          {row.map((arm) => (
            <ArmColumn key={arm.arm} arm={arm} selected={arm.arm === selected} width={width} now={now} />
          ))}
        </Box>
      ))}
      {primer !== undefined ? (
        <Text wrap="truncate-end" dimColor>
          {primer}
        </Text>
      ) : null}
      {why !== undefined ? (
        <Text wrap="truncate-end" bold color={why.green ? 'green' : 'red'}>
          {why.text}
        </Text>
      ) : null}
    </Box>
  );
}
