// The home store: what the cockpit home knows — the recent runs, which one is selected, whether the list
// or one run's replayed phase graph is on screen. `reduceHome` is pure (the tests fold actions through it);
// the controller (state/controller.ts) turns key intents into actions and calls the core for what the
// reducer accepted. A replay is the run's recorded events folded through the very `reduceRun` of the live
// screen, so a replayed graph can not disagree with what was shown live.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { RunEvent } from '../src/events.js';
import type { RunRow, RunRowStatus } from './controller.js';
import { initialRunState, reduceRun, type RunState } from './runStore.js';

export type HomeScreenName = 'list' | 'run';

export interface Replay {
  adwId: string;
  /** The run state rebuilt from its events; undefined while they are being read. */
  run?: RunState;
}

export interface HomeState {
  rows: RunRow[];
  /** The runs list has answered (possibly with no row). */
  loaded: boolean;
  /** Why the runs list could not be read. */
  loadError?: string;
  /** Index of the highlighted row (0 when there is none). */
  selected: number;
  screen: HomeScreenName;
  replay?: Replay;
  /** The run whose resume was handed to the core. */
  resuming?: string;
  /** One line telling the user what their last key did. */
  statusLine?: string;
  quitting: boolean;
}

export type HomeAction =
  | { type: 'rows_loaded'; rows: RunRow[] }
  | { type: 'rows_failed'; message: string }
  | { type: 'move'; by: number }
  | { type: 'open' }
  | { type: 'replay_loaded'; adwId: string; events: readonly RunEvent[] }
  | { type: 'replay_failed'; adwId: string; message: string }
  | { type: 'back' }
  | { type: 'resume' }
  | { type: 'quit' };

export function initialHomeState(): HomeState {
  return { rows: [], loaded: false, selected: 0, screen: 'list', quitting: false };
}

/** Only a run that stopped short can be continued: a green one is done, a running one is someone's. */
export function canResume(row: Pick<RunRow, 'status'>): boolean {
  return row.status === 'failed' || row.status === 'interrupted';
}

export function selectedRow(state: Pick<HomeState, 'rows' | 'selected'>): RunRow | undefined {
  return state.rows[state.selected];
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}

/** The exit code each recorded outcome stands for (SPEC 4). */
const EXIT_OF: Readonly<Record<Exclude<RunRowStatus, 'running'>, number>> = {
  green: 0,
  failed: 1,
  infrastructure: 2,
  interrupted: 130,
};

/**
 * Fold a run's events into the state the run screen draws. When the events stop before `run_finished` (the
 * cockpit was killed) but the trace store knows the run is over, the run is closed with the store's figures,
 * so a dead run never shows a spinner: its live phase reads as cut short.
 */
export function replayRun(events: readonly RunEvent[], row?: RunRow): RunState {
  let run = events.reduce(reduceRun, initialRunState());
  if (row === undefined) return run;
  if (run.adwId === undefined) {
    run = { ...run, adwId: row.adwId, adwName: row.adwName, totals: { ...run.totals, startedAt: row.startedAt } };
  }
  if (run.exit === undefined && row.status !== 'running') {
    const lastTs = events.length > 0 ? events[events.length - 1].ts : row.startedAt;
    const end = row.finishedAt ?? lastTs;
    const live = run.phases.find((phase) => phase.status === 'running' || phase.status === 'retrying');
    run = reduceRun(run, {
      type: 'run_finished',
      adwId: row.adwId,
      ts: end,
      exit: EXIT_OF[row.status],
      seconds: Math.max(0, end - row.startedAt) / 1000,
      tokens: row.tokens,
      cost: row.cost,
      ...(row.status !== 'green' && live !== undefined ? { failedPhase: live.name } : {}),
      ...(row.status === 'interrupted' ? { interrupted: true } : {}),
    });
  }
  return run;
}

export function reduceHome(state: HomeState, action: HomeAction): HomeState {
  if (state.quitting) return state;
  switch (action.type) {
    case 'rows_loaded': {
      // The selection stays on the same run when the list is read again.
      const current = selectedRow(state)?.adwId;
      const kept = action.rows.findIndex((row) => row.adwId === current);
      const selected = kept >= 0 ? kept : clamp(state.selected, 0, Math.max(0, action.rows.length - 1));
      return { ...state, rows: action.rows, loaded: true, loadError: undefined, selected };
    }

    case 'rows_failed':
      // A list that was shown stays shown; the failure is said once, on the status line.
      return state.loaded
        ? { ...state, statusLine: `could not read the runs: ${action.message}` }
        : { ...state, loaded: true, loadError: action.message };

    case 'move': {
      if (state.screen !== 'list' || state.rows.length === 0) return state;
      const selected = clamp(state.selected + action.by, 0, state.rows.length - 1);
      return selected === state.selected ? state : { ...state, selected, statusLine: undefined };
    }

    case 'open': {
      const row = selectedRow(state);
      if (state.screen !== 'list' || row === undefined) return state;
      return { ...state, screen: 'run', replay: { adwId: row.adwId }, statusLine: undefined };
    }

    case 'replay_loaded': {
      // A late answer for a run the user already left is dropped.
      if (state.screen !== 'run' || state.replay?.adwId !== action.adwId) return state;
      if (action.events.length === 0) {
        return { ...state, screen: 'list', replay: undefined, statusLine: `no events recorded for ${action.adwId}` };
      }
      const row = state.rows.find((candidate) => candidate.adwId === action.adwId);
      return { ...state, replay: { adwId: action.adwId, run: replayRun(action.events, row) } };
    }

    case 'replay_failed':
      if (state.screen !== 'run' || state.replay?.adwId !== action.adwId) return state;
      return {
        ...state,
        screen: 'list',
        replay: undefined,
        statusLine: `could not replay ${action.adwId}: ${action.message}`,
      };

    case 'back':
      if (state.screen !== 'run') return state;
      return { ...state, screen: 'list', replay: undefined, statusLine: undefined };

    case 'resume': {
      const row = selectedRow(state);
      if (row === undefined) return state;
      if (!canResume(row)) {
        return { ...state, statusLine: `${row.adwId} is ${row.status}: only a failed or interrupted run can be resumed` };
      }
      if (state.resuming === row.adwId) return state;
      return { ...state, resuming: row.adwId, statusLine: `resuming ${row.adwId}…` };
    }

    case 'quit':
      return { ...state, quitting: true, statusLine: 'quitting…' };

    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

export interface HomeActions {
  dispatch(action: HomeAction): void;
}

export type HomeStoreState = HomeState & HomeActions;
export type HomeStore = StoreApi<HomeStoreState>;

export function createHomeStore(initial: HomeState = initialHomeState()): HomeStore {
  return createStore<HomeStoreState>()((set) => ({
    ...initial,
    dispatch: (action) => set((state) => reduceHome(state, action)),
  }));
}
