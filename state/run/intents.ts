// The run screen's intents. Keys flow back to the core through here: a view turns a key into an intent
// (components/keymap.ts), and `dispatchRunIntent` records what the user asked in the store's UI state, then calls
// the controller that the core implements. Nothing here spawns or kills anything itself.

import type { RunState } from './state.js';
import type { RunStore } from './store.js';

/** Implemented by the core (src/tui/run.ts runScreenController). */
export interface RunController {
  /** Abort the running agent turn (pi RPC `abort` / kill of the json-mode attempt). Must be idempotent. */
  abort(): void;
  /** Leave the cockpit: while a run is live, abort it and close pi cleanly first (exit 130). */
  quit(): void;
  /** `d`: show the doctor's checklist over the run (the run goes on; closing it comes back here). */
  doctor?(): void;
}

/**
 * What the run screen's keys can ask for. The keymap decides which key means which intent in which
 * mode, so the Ctrl-C / q state machine lives in one table (components/keymap.ts).
 */
export type RunIntent = 'abort' | 'confirm-quit' | 'stay' | 'quit' | 'doctor';

/**
 * The run screen's input modes:
 * - running: a run is live, nothing asked yet;
 * - aborting: a first Ctrl-C asked for an abort; a second one quits;
 * - confirm-quit: `q` was pressed during a live run; `q` or Ctrl-C again quits, esc stays;
 * - finished: the run is over; `q` or Ctrl-C quits at once;
 * - quitting: quit() was sent; keys are ignored.
 */
export type RunMode = 'running' | 'aborting' | 'confirm-quit' | 'finished' | 'quitting';

export function runModeOf(state: RunState): RunMode {
  if (state.ui.quitting) return 'quitting';
  if (state.exit !== undefined) return 'finished';
  if (state.ui.quitArmed) return 'confirm-quit';
  if (state.ui.abortRequested) return 'aborting';
  return 'running';
}

export const STATUS_ABORTING = 'aborting the running turn… Ctrl-C again to quit';
export const STATUS_CONFIRM_QUIT = 'the run is still going: q again aborts it and quits, esc keeps it running';
export const STATUS_QUITTING = 'quitting…';

export function dispatchRunIntent(store: RunStore, controller: RunController, intent: RunIntent): void {
  const { setUi } = store.getState();
  switch (intent) {
    case 'abort':
      setUi({ abortRequested: true, quitArmed: false, statusLine: STATUS_ABORTING });
      controller.abort();
      return;
    case 'confirm-quit':
      setUi({ quitArmed: true, statusLine: STATUS_CONFIRM_QUIT });
      return;
    case 'stay':
      setUi({ quitArmed: false, statusLine: undefined });
      return;
    case 'quit':
      setUi({ quitting: true, quitArmed: false, statusLine: STATUS_QUITTING });
      controller.quit();
      return;
    case 'doctor':
      controller.doctor?.();
      return;
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown run intent ${String(unreachable)}`);
    }
  }
}
