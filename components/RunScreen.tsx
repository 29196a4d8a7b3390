// The run screen: header, phase graph, activity tail of the current phase, totals, status and key help.
// RunScreen reads the run store, owns the screen's one clock and the one input hook, and sends intents to
// the controller the core implements; RunView is its drawing, shared with the home's read-only replay.
// The screen mount (src/tui/mount.ts) renders it with `exitOnCtrlC: false`:
//   render(<RunScreen store={store} controller={controller} />, { exitOnCtrlC: false })

import React from 'react';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { dispatchRunIntent, runModeOf, type RunController } from '../state/run/intents.js';
import { currentPhaseOf, type RunState, type RunStore } from '../state/run/store.js';
import { ActivityTail } from './ActivityTail.js';
import { KeyHelp } from './KeyHelp.js';
import { RUN_KEYS, type KeyTable } from './keymap.js';
import { tailHeight } from './layout.js';
import { PhaseGraph, phaseGraphHeight } from './PhaseGraph.js';
import { SPINNER_INTERVAL_MS } from './theme.js';
import { Totals } from './Totals.js';
import { useClock } from './useClock.js';
import { useKeymap } from './useKeymap.js';
import { useTerminalSize } from './useTerminalSize.js';

export interface RunScreenProps {
  store: RunStore;
  controller: RunController;
}

export function RunHeader({ adwName, adwId, cwd }: { adwName?: string; adwId?: string; cwd?: string }) {
  if (adwId === undefined) {
    return (
      <Text wrap="truncate-end">
        <Text bold>factory</Text>
        <Text dimColor> · waiting for the run to start…</Text>
      </Text>
    );
  }
  // The path is the part that gives way on a narrow terminal, and it keeps its informative end.
  return (
    <Box>
      <Box flexShrink={0}>
        <Text wrap="truncate-end">
          <Text bold>factory</Text>
          {` · ${adwName ?? 'adw'} · `}
          <Text color="cyan">{adwId}</Text>
          {cwd ? ' · ' : ''}
        </Text>
      </Box>
      {cwd ? (
        <Box flexShrink={1}>
          <Text dimColor wrap="truncate-start">
            {cwd}
          </Text>
        </Box>
      ) : null}
    </Box>
  );
}

export interface RunViewProps {
  run: RunState;
  /** The screen clock (spinners, live durations). */
  now: number;
  /** The key table whose help line is shown: the live run's mode, or the replay's keys. */
  help: KeyTable<string>;
  statusLine?: string;
  /** A dimmed line under the header, e.g. that this is a replay. */
  note?: string;
  columns: number;
  rows?: number;
}

/**
 * The run screen's drawing, with no input and no timer of its own: the live RunScreen feeds it the run
 * store, the home feeds it a run replayed from its recorded events (read-only, its own keys).
 */
export function RunView({ run, now, help, statusLine, note, columns, rows }: RunViewProps): React.JSX.Element {
  const current = currentPhaseOf(run);
  const noteRows = note !== undefined ? 1 : 0;
  return (
    <Box flexDirection="column" width={columns}>
      <RunHeader adwName={run.adwName} adwId={run.adwId} cwd={run.cwd} />
      {note !== undefined ? (
        <Text dimColor wrap="truncate-end">
          {note}
        </Text>
      ) : null}
      <Box marginTop={1} flexDirection="column">
        <PhaseGraph phases={run.phases} now={now} />
      </Box>
      {current !== undefined ? (
        <Box marginTop={1} flexDirection="column">
          <ActivityTail phase={current} height={tailHeight(rows, phaseGraphHeight(run.phases) + noteRows)} />
        </Box>
      ) : null}
      <Box marginTop={1} flexDirection="column">
        <Totals run={run} now={now} />
        {statusLine !== undefined ? (
          <Text color="yellow" wrap="truncate-end">
            {statusLine}
          </Text>
        ) : null}
        <KeyHelp table={help} columns={columns} />
      </Box>
    </Box>
  );
}

export function RunScreen({ store, controller }: RunScreenProps): React.JSX.Element {
  const run = useStore(store);
  const { columns, rows } = useTerminalSize();
  const live = run.totals.startedAt !== undefined && run.exit === undefined;
  const now = useClock(live, SPINNER_INTERVAL_MS);
  const mode = runModeOf(run);

  useKeymap(
    () => RUN_KEYS[runModeOf(store.getState())],
    (intent) => dispatchRunIntent(store, controller, intent),
  );

  return (
    <RunView run={run} now={now} help={RUN_KEYS[mode]} statusLine={run.ui.statusLine} columns={columns} rows={rows} />
  );
}
