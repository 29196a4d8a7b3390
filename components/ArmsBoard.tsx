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
import type { ArmStatus, ArmView, WhyFirstLine } from '../state/bon/store.js';
import { formatCost, formatSeconds, formatTokens } from '../src/contract/format.js';
import { Spinner } from './Spinner.js';
import { statusColor, statusGlyph, TOOL_GLYPH } from './theme.js';

/** Narrowest column worth drawing (border and padding included). */
export const MIN_ARM_COLUMN = 24;
/** Lines inside a full card, plus its two border lines. */
const ARM_LINES = 11;
export const ARM_COLUMN_HEIGHT = ARM_LINES + 2;
/** A compact card (a short terminal): six lines inside, figures paired (cost first: it is what a narrow card must not cut), plus its borders. */
export const COMPACT_COLUMN_HEIGHT = 6 + 2;

/** How much of each arm the board draws: full cards, compact cards, or one line per arm. */
export type Density = 'cards' | 'compact' | 'lines';

const armColor: Readonly<Record<ArmStatus, string>> = {
  pending: statusColor.pending,
  running: statusColor.running,
  green: statusColor.ok,
  unverified: statusColor.retrying,
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
export function boardLayout(
  arms: number,
  columns: number,
  maxRows = Infinity,
): { perRow: number; rows: number; width: number } {
  if (arms === 0) return { perRow: 0, rows: 0, width: columns };
  const fit = Math.max(1, Math.floor(columns / MIN_ARM_COLUMN));
  const rows = Math.max(1, Math.min(Math.ceil(arms / Math.min(fit, arms)), Math.floor(maxRows)));
  const perRow = Math.ceil(arms / rows);
  return { perRow, rows, width: Math.max(1, Math.floor(columns / perRow)) };
}

export interface BoardFit {
  density: Density;
  layout: { perRow: number; rows: number; width: number };
  /** Lines the arms take (cards or lines, not the primer and why lines). */
  height: number;
}

/**
 * The densest drawing that keeps the arms within `height` lines: full cards, else compact cards, else one line
 * per arm (a window of them around the selected one when even that is too tall). No height: full cards.
 */
export function boardFit(arms: number, columns: number, height?: number): BoardFit {
  if (arms === 0) return { density: 'cards', layout: boardLayout(0, columns), height: 1 };
  for (const [density, cardHeight] of [
    ['cards', ARM_COLUMN_HEIGHT],
    ['compact', COMPACT_COLUMN_HEIGHT],
  ] as const) {
    const rows = height === undefined ? Infinity : Math.floor(height / cardHeight);
    if (rows >= 1) {
      const layout = boardLayout(arms, columns, rows);
      return { density, layout, height: layout.rows * cardHeight };
    }
  }
  return {
    density: 'lines',
    layout: { perRow: 1, rows: arms, width: columns },
    height: Math.min(arms, Math.max(1, height ?? arms)),
  };
}

/** Rows the board occupies: the arms, then the primer line and the why line when present. */
export function armsBoardHeight(arms: number, columns: number, footerLines: number, height?: number): number {
  return boardFit(arms, columns, height).height + footerLines;
}

/** The column's title: selection mark, rank, arm, winner star. */
export function armTitle(arm: ArmView, selected: boolean): string {
  const mark = selected ? '▸ ' : '';
  const rank = arm.rank !== undefined ? `#${arm.rank} ` : '';
  return `${mark}${rank}arm_${arm.arm}${arm.winner ? ' ★ winner' : ''}`;
}

function StateLine({ arm, now }: { arm: ArmView; now: number }): React.JSX.Element {
  if (arm.status === 'running' && arm.spend === 'paused') {
    return (
      <Text wrap="truncate-end" color="yellow">
        ⏸ paused at its cap: + more, a ends it
      </Text>
    );
  }
  if (arm.status === 'running') {
    return (
      <Text wrap="truncate-end">
        <Spinner now={now} color={statusColor.running} /> {arm.aborting ? 'aborting…' : 'running'}
      </Text>
    );
  }
  if (arm.status === 'pending' && arm.waiting !== undefined) {
    return (
      <Text wrap="truncate-end" dimColor>
        {`${statusGlyph.pending} ${arm.waiting}`}
      </Text>
    );
  }
  const glyph =
    arm.status === 'green'
      ? statusGlyph.ok
      : arm.status === 'pending'
        ? statusGlyph.pending
        : arm.status === 'unverified'
          ? '?'
          : statusGlyph.failed;
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
          <Text color={gate.ok ? statusColor.ok : statusColor.failed}>
            {gate.ok ? statusGlyph.ok : statusGlyph.failed}
          </Text>
          {` ${gate.gate}`}
        </React.Fragment>
      ))}
    </Text>
  );
}

function Verdict({ arm }: { arm: ArmView }): React.JSX.Element {
  // Green, but its guards had to refuse something: said where the verdict is, in the colour of a caution.
  if (arm.status === 'green' && arm.tried !== undefined) {
    return (
      <Text wrap="truncate-end" color="yellow">
        {`verdict green · ${arm.tried}`}
      </Text>
    );
  }
  if (arm.status === 'green') {
    return (
      <Text wrap="truncate-end" color={statusColor.ok}>
        {`verdict green${arm.fixed ? ` · fixed ${arm.fixed.join(', ')}` : ''}${arm.excused ? ` · ${arm.excused.join(', ')} red as on HEAD` : ''}`}
      </Text>
    );
  }
  if (arm.status === 'unverified') {
    return (
      <Text wrap="truncate-end" color={armColor.unverified}>
        {'unverified: nothing verified it'}
      </Text>
    );
  }
  if (arm.motif !== undefined) {
    return (
      <Text wrap="truncate-end" color={armColor[arm.status]}>
        {`↳ ${arm.motif}`}
      </Text>
    );
  }
  return <Text dimColor>verdict —</Text>;
}

/** A card's frame, full or compact: the border (cyan when selected), the arm's title and its model. */
function CardFrame({
  arm,
  selected,
  width,
  children,
}: {
  arm: ArmView;
  selected: boolean;
  width: number;
  children: React.ReactNode;
}) {
  return (
    <Box width={width} flexDirection="column" borderStyle="round" borderColor={selected ? 'cyan' : 'gray'} paddingX={1}>
      <Text wrap="truncate-end" bold color={selected ? 'cyan' : undefined}>
        {armTitle(arm, selected)}
      </Text>
      <Text wrap="truncate-end" color="magenta">
        {arm.model ?? 'default model'}
      </Text>
      {children}
    </Box>
  );
}

/** The patch's size: bytes, lines added and removed, files. */
export function patchText(patch: ArmView['patch'], short = false): string {
  if (!patch) return 'patch —';
  const lines = patch.added !== undefined ? ` · +${patch.added} −${patch.removed ?? 0}` : '';
  const files = short ? `${patch.files.length}f` : `${patch.files.length} file${patch.files.length === 1 ? '' : 's'}`;
  return `patch ${formatBytes(patch.bytes)}${lines} · ${files}`;
}

/** The arm's cost, with its cap and where it stands against it when it has one. */
export function costText(arm: ArmView): string {
  if (arm.cap === undefined) return `cost ${formatCost(arm.cost)}`;
  const note = arm.spend === 'wrap_up' ? ' · told to wrap up' : arm.spend === 'raised' ? ' · raised' : '';
  return `cost ${formatCost(arm.cost)} / ${formatCost(arm.cap)} cap${note}`;
}

function ArmColumn({ arm, selected, width, now }: { arm: ArmView; selected: boolean; width: number; now: number }) {
  const muted = arm.status === 'pending';
  const patch = patchText(arm.patch);
  return (
    <CardFrame arm={arm} selected={selected} width={width}>
      <StateLine arm={arm} now={now} />
      <Text wrap="truncate-end" dimColor={muted}>{`turns ${arm.turns}`}</Text>
      <Text wrap="truncate-end" dimColor={muted}>{`tokens ${formatTokens(arm.tokens)}`}</Text>
      <Text
        wrap="truncate-end"
        dimColor={muted}
        color={arm.spend === 'wrap_up' || arm.spend === 'paused' ? 'yellow' : undefined}
      >
        {costText(arm)}
      </Text>
      <Text
        wrap="truncate-end"
        dimColor={muted}
      >{`time ${arm.seconds !== undefined ? formatSeconds(arm.seconds) : '—'}`}</Text>
      <Text wrap="truncate-end" dimColor={arm.patch === undefined}>
        {patch}
      </Text>
      <Chips arm={arm} />
      <Verdict arm={arm} />
      <Text wrap="truncate-end" dimColor>
        {`${TOOL_GLYPH} ${arm.lastTool ?? '—'}`}
      </Text>
    </CardFrame>
  );
}

/** A compact card: state and time on one line, tokens, cost and turns on the next; the last line is the live tool
 *  while the arm runs, then its verdict (a motif) or its gates. */
function CompactColumn({ arm, selected, width, now }: { arm: ArmView; selected: boolean; width: number; now: number }) {
  const time = arm.seconds !== undefined ? formatSeconds(arm.seconds) : '—';
  const patch = patchText(arm.patch, true);
  const last =
    arm.status === 'running' ? (
      <Text wrap="truncate-end" dimColor>{`${TOOL_GLYPH} ${arm.lastTool ?? '—'}`}</Text>
    ) : (arm.status === 'green' ? arm.tried === undefined : arm.motif === undefined) ? (
      <Chips arm={arm} />
    ) : (
      <Verdict arm={arm} />
    );
  return (
    <CardFrame arm={arm} selected={selected} width={width}>
      <Box>
        <StateLine arm={arm} now={now} />
        <Text wrap="truncate-end" dimColor>{` · ${time}`}</Text>
      </Box>
      <Text
        wrap="truncate-end"
        dimColor={arm.status === 'pending'}
      >{`${formatCost(arm.cost)} · ${formatTokens(arm.tokens)} tok · ${arm.turns}t`}</Text>
      <Text wrap="truncate-end" dimColor={arm.patch === undefined}>
        {patch}
      </Text>
      {last}
    </CardFrame>
  );
}

/** One line per arm, when even compact cards do not fit: mark, rank, name, model, state, figures, motif. */
function ArmLine({ arm, selected, now }: { arm: ArmView; selected: boolean; now: number }) {
  const figures = `${formatTokens(arm.tokens)} tok · ${formatCost(arm.cost)}${arm.seconds !== undefined ? ` · ${formatSeconds(arm.seconds)}` : ''}`;
  return (
    <Box>
      <Text wrap="truncate-end" bold color={selected ? 'cyan' : undefined}>{`${armTitle(arm, selected)} `}</Text>
      <Text wrap="truncate-end" color="magenta">{`${arm.model ?? 'default model'} `}</Text>
      <StateLine arm={arm} now={now} />
      <Text
        wrap="truncate-end"
        dimColor
      >{` · ${figures}${arm.status !== 'green' && arm.motif !== undefined ? ` · ↳ ${arm.motif}` : ''}${arm.tried !== undefined ? ` · ${arm.tried}` : ''}`}</Text>
    </Box>
  );
}

/** The arms to list in `height` lines: all of them, or a window that holds the selected one and says how many are left out. */
export function lineWindow(
  arms: number,
  selectedIndex: number,
  height: number,
): { from: number; to: number; hidden: number } {
  if (arms <= height) return { from: 0, to: arms, hidden: 0 };
  const room = Math.max(1, height - 1); // one line says how many are not shown
  const from = Math.min(Math.max(0, selectedIndex - Math.floor(room / 2)), arms - room);
  return { from, to: from + room, hidden: arms - room };
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
  /** Lines the arms may take (the terminal's height less the rest of the screen); none: full cards. */
  height?: number;
}

export function ArmsBoard({ arms, selected, columns, now, primer, why, height }: ArmsBoardProps): React.JSX.Element {
  const fit = boardFit(arms.length, columns, height);
  const { perRow, width } = fit.layout;
  const rows: ArmView[][] = [];
  if (fit.density !== 'lines')
    for (let index = 0; index < arms.length; index += Math.max(1, perRow)) rows.push(arms.slice(index, index + perRow));
  const Card = fit.density === 'compact' ? CompactColumn : ArmColumn;
  const window = lineWindow(
    arms.length,
    Math.max(
      0,
      arms.findIndex((arm) => arm.arm === selected),
    ),
    fit.height,
  );
  return (
    <Box flexDirection="column" width={columns}>
      {arms.length === 0 ? <Text dimColor>arms: waiting for the primer…</Text> : null}
      {rows.map((row, index) => (
        <Box key={index} flexDirection="row">
          {row.map((arm) => (
            <Card key={arm.arm} arm={arm} selected={arm.arm === selected} width={width} now={now} />
          ))}
        </Box>
      ))}
      {fit.density === 'lines'
        ? arms
            .slice(window.from, window.to)
            .map((arm) => <ArmLine key={arm.arm} arm={arm} selected={arm.arm === selected} now={now} />)
        : null}
      {fit.density === 'lines' && window.hidden > 0 ? (
        <Text dimColor wrap="truncate-end">{`… ${window.hidden} more arm(s): ←/→ to see them`}</Text>
      ) : null}
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
