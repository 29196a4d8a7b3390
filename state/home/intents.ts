// The home screen's intents (`factory` with no arguments): the recent runs list and a run replayed from its
// events. A key's intent becomes a home action; the reducer decides, and the effect it returns is run here on
// the HomeController the core implements (read the list or a run's events, resume, quit).

import type { RunEvent } from '../../src/contract/events.js';
import { errorText } from '../errorText.js';
import type { HomeAction, HomeEffect, HomeState, HomeStore, RunRow } from './store.js';

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
}

export type HomeIntent = 'up' | 'down' | 'open' | 'back' | 'resume' | 'quit' | 'doctor';

/**
 * The home's input modes:
 * - loading: the runs list has not answered yet;
 * - empty: no run to show (none yet, or the list could not be read);
 * - list: rows to move through, open or resume;
 * - replay: one run's phase graph, read-only;
 * - quitting: quit() was sent; keys are ignored.
 */
export type HomeMode = 'loading' | 'empty' | 'list' | 'replay' | 'quitting';

export function homeModeOf(state: HomeState): HomeMode {
  if (state.quitting) return 'quitting';
  if (state.screen === 'run') return 'replay';
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
    default: {
      const unreachable: never = effect;
      throw new Error(`unknown home effect ${String(unreachable)}`);
    }
  }
}

const ACTION_OF: Readonly<Record<Exclude<HomeIntent, 'doctor'>, HomeAction>> = {
  up: { type: 'move', by: -1 },
  down: { type: 'move', by: 1 },
  open: { type: 'open' },
  back: { type: 'back' },
  resume: { type: 'resume' },
  quit: { type: 'quit' },
};

/** Apply one home intent: the pure reducer decides, then its effect is run on the controller. */
export function dispatchHomeIntent(store: HomeStore, controller: HomeController, intent: HomeIntent): void {
  // Nothing in the home store changes: the doctor is its own screen, with its own store.
  if (intent === 'doctor') {
    controller.doctor?.();
    return;
  }
  const action = ACTION_OF[intent];
  if (action === undefined) throw new Error(`unknown home intent ${String(intent)}`);
  runHomeEffect(store, controller, store.getState().dispatch(action));
}
