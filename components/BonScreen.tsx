// The bon screen (`factory bon`): header, phase graph (arms as parallel branches), the arms board with the
// primer apart and "why #1", the harvest's proposal, totals, status line and key help; `enter` swaps the
// graph and board for the selected arm's diff. BonScreen reads the bon store, owns the screen's one clock
// and the one input hook, and sends intents to the controller; BonView is its pure drawing.
// The screen mount (src/tui/mount.ts) renders it with `exitOnCtrlC: false`:
//   render(<BonScreen store={store} controller={controller} />, { exitOnCtrlC: false })

import React, { useRef } from 'react';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { bonModeOf, dispatchBonIntent, typeIntoBoard, type BonController } from '../state/bon/intents.js';
import {
  armsOf,
  primerTextOf,
  proposalLine,
  selectedArm,
  spendLinesOf,
  whyFirstOf,
  type BonState,
  type BonStore,
  type CompareState,
} from '../state/bon/store.js';
import { OverlapView } from './OverlapView.js';
import { SideBySide } from './SideBySide.js';
import { printableLine } from './DiffView.js';
import { ArmsBoard, armsBoardHeight } from './ArmsBoard.js';
import { DiffView } from './DiffView.js';
import { KeyHelp } from './KeyHelp.js';
import { BON_KEYS, type KeyTable } from './keymap.js';
import { PhaseGraph, phaseGraphHeight, PhaseStrip } from './PhaseGraph.js';
import { RunHeader } from './RunScreen.js';
import { SPINNER_INTERVAL_MS } from './theme.js';
import { Totals } from './Totals.js';
import { useClock } from './useClock.js';
import { useKeymap } from './useKeymap.js';
import { useTerminalSize } from './useTerminalSize.js';

/** Diff lines shown when the terminal does not report its height. */
export const DEFAULT_DIFF_LINES = 20;
/** Lines around the diff: header, gap, diff title, gap, totals, status, help. */
const DIFF_CHROME = 7;
/** Lines around graph and board: header, two gaps, totals, status, help, the proposal line. */
const BOARD_CHROME = 8;

export function diffHeight(rows: number | undefined): number {
  if (rows === undefined) return DEFAULT_DIFF_LINES;
  return Math.max(3, rows - DIFF_CHROME);
}

export interface BonViewProps {
  state: BonState;
  now: number;
  help: KeyTable<string>;
  columns: number;
  rows?: number;
}

/** Two or more arms' patches compared: their overlap (`o`), or two side by side (`s`). */
function CompareView({
  compare,
  height,
  columns,
}: {
  compare: CompareState;
  height: number;
  columns: number;
}): React.JSX.Element {
  if (compare.status === 'loading')
    return <Text dimColor>{`reading the patches of arms ${compare.arms.join(', ')}…`}</Text>;
  if (compare.status === 'failed')
    return (
      <Text color="red" wrap="truncate-end">{`could not read the patches: ${compare.error ?? 'unknown error'}`}</Text>
    );
  if (compare.kind === 'overlap' && compare.overlap) {
    return (
      <OverlapView
        overlap={compare.overlap}
        arms={compare.arms}
        height={height}
        columns={columns}
        offset={compare.offset}
      />
    );
  }
  return (
    <SideBySide
      left={{ arm: compare.arms[0]! }}
      right={{ arm: compare.arms[1]! }}
      rows={compare.rows ?? []}
      height={height}
      columns={columns}
      offset={compare.offset}
    />
  );
}

export function BonView({ state, now, help, columns, rows }: BonViewProps): React.JSX.Element {
  const { diff, compare, steer } = state.bon.ui;
  const arms = armsOf(state, now);
  const primerText = primerTextOf(state, arms.length);
  const why = whyFirstOf(state);
  const proposal = proposalLine(state);
  const spend = spendLinesOf(state);
  const footer =
    (primerText !== undefined ? 1 : 0) + (why !== undefined ? 1 : 0) + spend.length + (steer !== undefined ? 1 : 0);
  // A short terminal keeps the board (the arms are the point of this screen) and folds the graph to one line.
  // Rows of arm cards that fit beside the chrome and a one-line phase strip (a strip and its gap: 2 lines).
  // Lines the arms may take beside the chrome and a one-line phase strip (a strip and its gap: 2 lines); the
  // board picks full cards, compact cards or one line per arm to stay within them.
  const armLines = rows === undefined ? undefined : Math.max(1, rows - BOARD_CHROME - footer - 2);
  const board = armsBoardHeight(arms.length, columns, footer, armLines) + BOARD_CHROME;
  const showGraph = rows === undefined || phaseGraphHeight(state.phases) + board <= rows;

  return (
    <Box flexDirection="column" width={columns}>
      <RunHeader adwName={state.adwName} adwId={state.adwId} cwd={state.cwd} />
      {compare !== undefined ? (
        <Box marginTop={1} flexDirection="column">
          <CompareView compare={compare} height={diffHeight(rows)} columns={columns} />
        </Box>
      ) : diff !== undefined ? (
        <Box marginTop={1} flexDirection="column">
          <DiffView diff={diff} height={diffHeight(rows)} columns={columns} />
        </Box>
      ) : (
        <>
          <Box marginTop={1} flexDirection="column">
            {showGraph ? (
              <PhaseGraph phases={state.phases} now={now} />
            ) : (
              <PhaseStrip phases={state.phases} now={now} />
            )}
          </Box>
          <Box marginTop={1} flexDirection="column">
            <ArmsBoard
              arms={arms}
              selected={selectedArm(state)}
              columns={columns}
              now={now}
              primer={primerText}
              why={why}
              height={armLines}
            />
            {spend.map((line) => (
              <Text
                key={line}
                wrap="truncate-end"
                color={line.startsWith('fan out?') ? 'yellow' : undefined}
                dimColor={!line.startsWith('fan out?')}
              >
                {line}
              </Text>
            ))}
            {steer !== undefined ? (
              <Text wrap="truncate-end" color="cyan">
                {`message to arm_${steer.arm} › ${printableLine(steer.text)}▌`}
              </Text>
            ) : null}
            {proposal !== undefined ? (
              <Text wrap="truncate-end" dimColor>
                {proposal}
              </Text>
            ) : null}
          </Box>
        </>
      )}
      <Box marginTop={1} flexDirection="column">
        <Totals run={state} now={now} />
        {state.ui.statusLine !== undefined ? (
          <Text color="yellow" wrap="truncate-end">
            {state.ui.statusLine}
          </Text>
        ) : null}
        <KeyHelp table={help} columns={columns} />
      </Box>
    </Box>
  );
}

export interface BonScreenProps {
  store: BonStore;
  controller: BonController;
}

export function BonScreen({ store, controller }: BonScreenProps): React.JSX.Element {
  const state = useStore(store);
  const { columns, rows } = useTerminalSize();
  const live = state.totals.startedAt !== undefined && state.exit === undefined;
  const now = useClock(live, SPINNER_INTERVAL_MS);
  // The page the diff keys scroll by is the one drawn now (read at key time, like the table).
  const page = useRef(diffHeight(rows));
  page.current = diffHeight(rows);

  useKeymap(
    () => BON_KEYS[bonModeOf(store.getState())],
    (intent) => dispatchBonIntent(store, controller, intent, { page: page.current }),
    (text) => typeIntoBoard(store, text),
  );

  return <BonView state={state} now={now} help={BON_KEYS[bonModeOf(state)]} columns={columns} rows={rows} />;
}
