// The home screen's intents (`factory` with no arguments): the recent runs list and a run replayed from its
// events. A key's intent becomes a home action; the reducer decides, and the effect it returns is run here on
// the HomeController the core implements (read the list or a run's events, resume, quit).

import type { RunEvent } from '../../src/contract/events.js';
import { errorText } from '../errorText.js';
import { boardAction, readBoardPatches } from '../bon/intents.js';
import type { BonAction } from '../bon/actions.js';
import { armPhase, extrasOf } from '../bon/state.js';
import { isBonReplay, type HomeAction, type HomeEffect, type HomeState, type HomeStore, type RunRow } from './store.js';

/** Implemented by the core (src/tui/home.ts) on top of the trace store. */
export interface HomeController {
  /** Recent runs, newest first. */
  listRuns(): RunRow[] | Promise<RunRow[]>;
  /** The run's recorded events, in order, to replay its phase graph. */
  runEvents(adwId: string): RunEvent[] | Promise<RunEvent[]>;
  /** Continue a failed or interrupted run live (src/tui/ then shows its run screen). */
  resume(adwId: string): void;
  quit(): void;
  /** Open the doctor checklist (`d`); src/tui/ shows the doctor screen, then comes back. */
  doctor?(): void;
  /** The text of a replayed arm's sealed patch, from the file its run recorded (masked like the live board's). */
  readPatch?(file: string): string | Promise<string>;
}

export type HomeIntent =
  | 'up'
  | 'down'
  | 'open'
  | 'back'
  | 'resume'
  | 'quit'
  | 'doctor'
  // A replayed arms board, read-only: select an arm, its diff, the overlap or two side by side, scroll, close.
  | 'left'
  | 'right'
  | 'diff'
  | 'overlap'
  | 'side'
  | 'next-pair'
  | 'close'
  | 'page-up'
  | 'page-down'
  | 'top'
  | 'bottom';

/**
 * The home's input modes:
 * - loading: the runs list has not answered yet;
 * - empty: no run to show (none yet, or the list could not be read);
 * - list: rows to move through, open or resume;
 * - replay: one run's phase graph, read-only;
 * - replay-board: a best-of-N run's arms board, read-only (select, diff, compare);
 * - replay-view: its diff or comparison view (scroll, close);
 * - quitting: quit() was sent; keys are ignored.
 */
export type HomeMode = 'loading' | 'empty' | 'list' | 'replay' | 'replay-board' | 'replay-view' | 'quitting';

export function homeModeOf(state: HomeState): HomeMode {
  if (state.quitting) return 'quitting';
  if (state.screen === 'run') {
    const run = state.replay?.run;
    if (!isBonReplay(run)) return 'replay';
    return run.bon.ui.diff !== undefined || run.bon.ui.compare !== undefined ? 'replay-view' : 'replay-board';
  }
  if (!state.loaded) return 'loading';
  return state.rows.length === 0 ? 'empty' : 'list';
}

/** Ask the core for the runs list and fold the answer (or its failure) into the home store. */
export async function loadRuns(store: HomeStore, controller: HomeController): Promise<void> {
  try {
    const rows = await controller.listRuns();
    store.getState().dispatch({ type: 'rows_loaded', rows });
  } catch (error) {
    store.getState().dispatch({ type: 'rows_failed', message: errorText(error) });
  }
}

async function loadReplay(store: HomeStore, controller: HomeController, adwId: string): Promise<void> {
  try {
    const events = await controller.runEvents(adwId);
    store.getState().dispatch({ type: 'replay_loaded', adwId, events });
  } catch (error) {
    store.getState().dispatch({ type: 'replay_failed', adwId, message: errorText(error) });
  }
}

/** Carry out what the home reducer asked for. */
export function runHomeEffect(store: HomeStore, controller: HomeController, effect: HomeEffect | undefined): void {
  if (effect === undefined) return;
  switch (effect.type) {
    case 'load_replay':
      void loadReplay(store, controller, effect.adwId);
      return;
    case 'load_runs':
      void loadRuns(store, controller);
      return;
    case 'resume':
      controller.resume(effect.adwId);
      return;
    case 'quit':
      controller.quit();
      return;
    case 'board_read': {
      const run = store.getState().replay?.run;
      if (!isBonReplay(run)) return;
      // An arm with no sealed patch reads as empty, as on the live board.
      const read = (arm: number) => {
        const file = extrasOf(run.bon, armPhase(run, arm)).patch?.file;
        return file && controller.readPatch ? controller.readPatch(file) : '';
      };
      readBoardPatches(effect.effect, run, read, (action) => store.getState().dispatch({ type: 'board', action }));
      return;
    }
    default: {
      const unreachable: never = effect;
      throw new Error(`unknown home effect ${String(unreachable)}`);
    }
  }
}

const ACTION_OF: Readonly<Record<'up' | 'down' | 'open' | 'back' | 'resume' | 'quit', HomeAction>> = {
  up: { type: 'move', by: -1 },
  down: { type: 'move', by: 1 },
  open: { type: 'open' },
  back: { type: 'back' },
  resume: { type: 'resume' },
  quit: { type: 'quit' },
};

/** Rows a replayed diff or comparison scrolls by for PgUp/PgDn: the view's height, known to the screen. */
export interface HomeViewport {
  page: number;
}

/** The board keys a replay takes: those that read (the live board's own mapping, ../bon/intents.ts boardAction). */
const READING_KEYS: ReadonlySet<HomeIntent> = new Set<HomeIntent>([
  'left',
  'right',
  'diff',
  'overlap',
  'side',
  'next-pair',
  'up',
  'down',
  'page-up',
  'page-down',
  'top',
  'bottom',
]);

/** The board action of a key on a replayed board (esc closes its view), or undefined for a key of the list. */
function boardActionOf(
  intent: HomeIntent,
  mode: ReturnType<typeof homeModeOf>,
  view: HomeViewport,
): BonAction | undefined {
  if (mode === 'replay-view' && intent === 'close') return boardAction('back', view);
  if ((mode !== 'replay-board' && mode !== 'replay-view') || !READING_KEYS.has(intent)) return undefined;
  return boardAction(intent as Parameters<typeof boardAction>[0], view);
}

/** Apply one home intent: the pure reducer decides, then its effect is run on the controller. */
export function dispatchHomeIntent(
  store: HomeStore,
  controller: HomeController,
  intent: HomeIntent,
  view: HomeViewport = { page: 10 },
): void {
  // Nothing in the home store changes: the doctor is its own screen, with its own store.
  if (intent === 'doctor') {
    controller.doctor?.();
    return;
  }
  const board = boardActionOf(intent, homeModeOf(store.getState()), view);
  if (board !== undefined) {
    runHomeEffect(store, controller, store.getState().dispatch({ type: 'board', action: board }));
    return;
  }
  const action = (ACTION_OF as Partial<Record<HomeIntent, HomeAction>>)[intent];
  if (action === undefined) return; // a board key with no board on screen
  runHomeEffect(store, controller, store.getState().dispatch(action));
}
