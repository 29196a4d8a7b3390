// The cockpit home (`factory` with no arguments, in a TTY): the recent runs, and one run's phase graph
// replayed from its recorded events, read-only. It reads the home store, owns the screen's one clock and
// its one input hook (keys from keymap.ts HOME_KEYS), and asks the core through the HomeController. The
// screen mount (src/tui/mount.ts) renders it with `exitOnCtrlC: false`:
//   render(<HomeScreen store={createHomeStore()} controller={controller} />, { exitOnCtrlC: false })

import React, { useEffect, useRef } from 'react';
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import { dispatchHomeIntent, homeModeOf, loadRuns, type HomeController } from '../state/home/intents.js';
import { isBonReplay, type HomeStore } from '../state/home/store.js';
import { KeyHelp } from './KeyHelp.js';
import { HOME_KEYS } from './keymap.js';
import { BonView, diffHeight } from './BonScreen.js';
import type { BonState } from '../state/bon/state.js';
import type { RunState } from '../state/run/state.js';
import { RunView } from './RunScreen.js';
import { RunsTable, runsTableHeight } from './RunsTable.js';
import { SPINNER_INTERVAL_MS } from './theme.js';
import { useClock } from './useClock.js';
import { useKeymap } from './useKeymap.js';
import { useTerminalSize } from './useTerminalSize.js';

export interface HomeScreenProps {
  store: HomeStore;
  controller: HomeController;
}

/** Ages read in minutes: the list needs no faster clock than this. */
const AGE_TICK_MS = 15_000;
/** Lines of the list screen around the table: title, gap, gap, status, key help. */
const HOME_CHROME = 5;
/** Table rows when the terminal does not report its height. */
const DEFAULT_TABLE_ROWS = 15;

export const EMPTY_HINT = 'No runs yet. Start one with `factory demo`, or `factory prompt "<your ask>"`.';
export const REPLAY_NOTE = 'replayed from the trace · read-only';

/** A replayed best-of-N run carries its arms (state/home/store.ts replayRun folds it as the board does). */

export function HomeScreen({ store, controller }: HomeScreenProps): React.JSX.Element {
  const home = useStore(store);
  const { columns, rows } = useTerminalSize();
  const mode = homeModeOf(home);
  const replayed = home.screen === 'run' ? home.replay?.run : undefined;
  // A replay of a run still going elsewhere keeps its spinners turning; the list only needs its ages.
  const liveReplay = replayed !== undefined && replayed.exit === undefined;
  const now = useClock(!home.quitting, liveReplay ? SPINNER_INTERVAL_MS : AGE_TICK_MS);

  useEffect(() => {
    void loadRuns(store, controller);
  }, [store, controller]);

  // The page a replayed diff scrolls by is the one drawn now (read at key time).
  const page = useRef(diffHeight(rows));
  page.current = diffHeight(rows);
  useKeymap(
    () => HOME_KEYS[homeModeOf(store.getState())],
    (intent) => dispatchHomeIntent(store, controller, intent, { page: page.current }),
  );

  if (home.screen === 'run') {
    if (replayed !== undefined && isBonReplay(replayed)) {
      return (
        <BonView
          state={{ ...replayed, ui: { ...replayed.ui, statusLine: home.statusLine ?? REPLAY_NOTE } }}
          now={liveReplay ? now : (replayed.totals.finishedAt ?? now)}
          help={HOME_KEYS[mode]}
          columns={columns}
          rows={rows}
        />
      );
    }
    if (replayed !== undefined) {
      return (
        <RunView
          run={replayed}
          now={liveReplay ? now : (replayed.totals.finishedAt ?? now)}
          help={HOME_KEYS[mode]}
          statusLine={home.statusLine}
          note={REPLAY_NOTE}
          columns={columns}
          rows={rows}
        />
      );
    }
    return (
      <Box flexDirection="column" width={columns}>
        <Text wrap="truncate-end">
          <Text bold>factory</Text>
          <Text dimColor>{` · reading run ${home.replay?.adwId ?? ''}…`}</Text>
        </Text>
        <Box marginTop={1}>
          <KeyHelp table={HOME_KEYS[mode]} columns={columns} />
        </Box>
      </Box>
    );
  }

  const tableRows = rows === undefined ? DEFAULT_TABLE_ROWS : Math.max(1, rows - HOME_CHROME - 2);
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end">
        <Text bold>factory</Text>
        <Text dimColor> · recent runs</Text>
      </Text>
      <Box
        marginTop={1}
        flexDirection="column"
        minHeight={home.rows.length > 0 ? runsTableHeight(home.rows.length, tableRows) : 1}
      >
        {!home.loaded ? <Text dimColor>reading the runs…</Text> : null}
        {home.loaded && home.loadError !== undefined ? (
          <Text color="red" wrap="truncate-end">{`could not read the runs: ${home.loadError}`}</Text>
        ) : null}
        {home.loaded && home.loadError === undefined && home.rows.length === 0 ? (
          <Text wrap="truncate-end">{EMPTY_HINT}</Text>
        ) : null}
        {home.rows.length > 0 ? (
          <RunsTable rows={home.rows} selected={home.selected} now={now} columns={columns} height={tableRows} />
        ) : null}
      </Box>
      <Box marginTop={1} flexDirection="column">
        {home.statusLine !== undefined ? (
          <Text color="yellow" wrap="truncate-end">
            {home.statusLine}
          </Text>
        ) : null}
        <KeyHelp table={HOME_KEYS[mode]} columns={columns} />
      </Box>
    </Box>
  );
}
