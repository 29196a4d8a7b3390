// The home store: what the cockpit home knows — the recent runs, which one is selected, whether the list
// or one run's replayed phase graph is on screen. `reduceHome` is pure (the tests fold actions through it) and
// returns, with the next state, the one effect the core must carry out for an accepted action (read a run's
// events, read the list again, resume, quit); the home's intents (homeIntents.ts) run it on the controller.
// A replay is the run's recorded events folded through the very `reduceRun` of the live screen, so a replayed
// graph can not disagree with what was shown live.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { RunEvent } from '../../src/contract/events.js';
import type { RunRow as TraceRunRow } from '../../src/trace/queries.js';
import { reduceBonEvent, reduceBonUi } from '../bon/reducer.js';
import type { BonAction, BonEffect } from '../bon/actions.js';
import { initialBonState, type BonState } from '../bon/state.js';
import { reduceRun } from '../run/reducer.js';
import { initialRunState, type RunState } from '../run/state.js';
import { stay, type Step } from '../step.js';
import { EXIT } from '../../src/contract/exit.js';

/**
 * One line of the runs list: the fields of the trace store's row (src/trace/queries.ts, where it is declared
 * once) that the home draws and replays with. The trace store's rows fit it as they are.
 */
export type RunRow = Pick<
  TraceRunRow,
  'adwId' | 'adwName' | 'status' | 'phases' | 'tokens' | 'cost' | 'startedAt' | 'finishedAt'
>;

/** How a run ended, or that it still runs (as the trace store reports it). */
export type RunRowStatus = RunRow['status'];

export type HomeScreenName = 'list' | 'run';

export interface Replay {
  adwId: string;
  /** The run state rebuilt from its events (a best-of-N run's with its arms); undefined while they are being read. */
  run?: RunState | BonState;
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
  | { type: 'quit' }
  /** A key on a replayed arms board: only what reads (select, diff, compare, scroll), never what acts. */
  | { type: 'board'; action: BonAction };

/** What the core must do for an accepted home action. */
export type HomeEffect =
  /** Read the opened run's events, to replay it. */
  | { type: 'load_replay'; adwId: string }
  /** Read the runs list again (a run that was live may have finished meanwhile). */
  | { type: 'load_runs' }
  /** Continue this failed or interrupted run live. */
  | { type: 'resume'; adwId: string }
  | { type: 'quit' }
  /** Read the replayed run's sealed patches for its diff or comparison view. */
  | { type: 'board_read'; adwId: string; effect: BoardRead };

/** What a replayed board may ask the core: to read patches, nothing else (the run is over, or someone else's). */
export type BoardRead = Extract<BonEffect, { type: 'read_patch' | 'read_patches' }>;

/** The board actions a replay takes: reading ones. Abort, clone, apply, steer, raise belong to the live run. */
const READING: ReadonlySet<BonAction['type']> = new Set([
  'select',
  'open_diff',
  'diff_loaded',
  'diff_failed',
  'scroll',
  'scroll_to',
  'close_diff',
  'compare_open',
  'compare_loaded',
  'compare_failed',
  'compare_next',
] satisfies BonAction['type'][]);

export function isBonReplay(run: RunState | BonState | undefined): run is BonState {
  return run !== undefined && 'bon' in run;
}

export type HomeStep = Step<HomeState, HomeEffect>;

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

/** The exit code each recorded outcome stands for (SPEC 4): the one table. */
const EXIT_OF: Readonly<Record<Exclude<RunRowStatus, 'running'>, number>> = EXIT;

/**
 * Fold a run's events into the state the run screen draws. When the events stop before `run_finished` (the
 * cockpit was killed) but the trace store knows the run is over, the run is closed with the store's figures,
 * so a dead run never shows a spinner: its live phase reads as cut short.
 */
export function replayRun(events: readonly RunEvent[], row?: RunRow): RunState | BonState {
  // A best-of-N run is folded as its live board folds it: the replay shows its arms (cards, why #1), read-only.
  const bon = events.some((e) => e.type === 'run_started' && e.adwName === 'adw_bon');
  const fold = (bon ? reduceBonEvent : reduceRun) as (state: RunState, event: RunEvent) => RunState;
  let run = events.reduce(fold, bon ? initialBonState() : initialRunState());
  if (row === undefined) return run;
  if (run.adwId === undefined) {
    run = { ...run, adwId: row.adwId, adwName: row.adwName, totals: { ...run.totals, startedAt: row.startedAt } };
  }
  if (run.exit === undefined && row.status !== 'running') {
    const lastTs = events.length > 0 ? events[events.length - 1].ts : row.startedAt;
    const end = row.finishedAt ?? lastTs;
    const live = run.phases.find((phase) => phase.status === 'running' || phase.status === 'retrying');
    run = fold(run, {
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

export function reduceHome(state: HomeState, action: HomeAction): HomeStep {
  if (state.quitting) return stay(state);
  switch (action.type) {
    case 'rows_loaded': {
      // The selection stays on the same run when the list is read again.
      const current = selectedRow(state)?.adwId;
      const kept = action.rows.findIndex((row) => row.adwId === current);
      const selected = kept >= 0 ? kept : clamp(state.selected, 0, Math.max(0, action.rows.length - 1));
      return stay({ ...state, rows: action.rows, loaded: true, loadError: undefined, selected });
    }

    case 'rows_failed':
      // A list that was shown stays shown; the failure is said once, on the status line.
      return stay(
        state.loaded
          ? { ...state, statusLine: `could not read the runs: ${action.message}` }
          : { ...state, loaded: true, loadError: action.message },
      );

    case 'move': {
      if (state.screen !== 'list' || state.rows.length === 0) return stay(state);
      const selected = clamp(state.selected + action.by, 0, state.rows.length - 1);
      return stay(selected === state.selected ? state : { ...state, selected, statusLine: undefined });
    }

    case 'open': {
      const row = selectedRow(state);
      if (state.screen !== 'list' || row === undefined) return stay(state);
      return {
        state: { ...state, screen: 'run', replay: { adwId: row.adwId }, statusLine: undefined },
        effect: { type: 'load_replay', adwId: row.adwId },
      };
    }

    case 'replay_loaded': {
      // A late answer for a run the user already left is dropped.
      if (state.screen !== 'run' || state.replay?.adwId !== action.adwId) return stay(state);
      if (action.events.length === 0) {
        return stay({
          ...state,
          screen: 'list',
          replay: undefined,
          statusLine: `no events recorded for ${action.adwId}`,
        });
      }
      const row = state.rows.find((candidate) => candidate.adwId === action.adwId);
      return stay({ ...state, replay: { adwId: action.adwId, run: replayRun(action.events, row) } });
    }

    case 'replay_failed':
      if (state.screen !== 'run' || state.replay?.adwId !== action.adwId) return stay(state);
      return stay({
        ...state,
        screen: 'list',
        replay: undefined,
        statusLine: `could not replay ${action.adwId}: ${action.message}`,
      });

    case 'back':
      if (state.screen !== 'run') return stay(state);
      // A run that was live may have finished meanwhile: the list is read again.
      return {
        state: { ...state, screen: 'list', replay: undefined, statusLine: undefined },
        effect: { type: 'load_runs' },
      };

    case 'resume': {
      const row = selectedRow(state);
      if (row === undefined) return stay(state);
      if (!canResume(row)) {
        return stay({
          ...state,
          statusLine: `${row.adwId} is ${row.status}: only a failed or interrupted run can be resumed`,
        });
      }
      // Once per run.
      if (state.resuming === row.adwId) return stay(state);
      return {
        state: { ...state, resuming: row.adwId, statusLine: `resuming ${row.adwId}…` },
        effect: { type: 'resume', adwId: row.adwId },
      };
    }

    case 'quit':
      return { state: { ...state, quitting: true, statusLine: 'quitting…' }, effect: { type: 'quit' } };

    case 'board': {
      const replay = state.replay;
      if (state.screen !== 'run' || !isBonReplay(replay?.run) || !READING.has(action.action.type)) return stay(state);
      const step = reduceBonUi(replay.run, action.action);
      const next = { ...state, replay: { ...replay, run: step.state } };
      const read = step.effect;
      if (read?.type === 'read_patch' || read?.type === 'read_patches')
        return { state: next, effect: { type: 'board_read', adwId: replay.adwId, effect: read } };
      return stay(next);
    }

    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

export interface HomeActions {
  /** Fold one action; returns what the core must do for it, when anything. */
  dispatch(action: HomeAction): HomeEffect | undefined;
}

export type HomeStoreState = HomeState & HomeActions;
export type HomeStore = StoreApi<HomeStoreState>;

export function createHomeStore(initial: HomeState = initialHomeState()): HomeStore {
  return createStore<HomeStoreState>()((set, get) => ({
    ...initial,
    dispatch: (action) => {
      const { state, effect } = reduceHome(get(), action);
      set(state);
      return effect;
    },
  }));
}
