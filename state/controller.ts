// Keys flow back to the core through here: a view turns a key into an intent (components/keymap.ts), and
// `dispatchRunIntent` records what the user asked in the store's UI state, then calls the controller that
// the core implements. Nothing here spawns or kills anything itself.

import type { RunEvent } from '../src/events.js';
import { runningArm, type BonState, type BonStore } from './bonStore.js';
import type { HomeState, HomeStore } from './homeStore.js';
import type { RunState, RunStore } from './runStore.js';

/** Implemented by the core (composition root, src/cli.tsx). */
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

// ── The cockpit home (`factory` with no arguments): the recent runs list and a run replayed from its events.

/** How a run ended, or that it still runs (as the trace store reports it). */
export type RunRowStatus = 'running' | 'green' | 'failed' | 'interrupted' | 'infrastructure';

/**
 * One line of the runs list. The trace store (src/) produces it; it may declare its own structurally equal
 * type, since the core never imports state/.
 */
export interface RunRow {
  adwId: string;
  adwName: string;
  status: RunRowStatus;
  /** Phases done over phases planned, e.g. "2/3". */
  phases: string;
  tokens: number;
  cost: number;
  /** Milliseconds since the epoch. */
  startedAt: number;
  finishedAt?: number;
}

/** Implemented by the core (composition root) on top of the trace store. */
export interface HomeController {
  /** Recent runs, newest first. */
  listRuns(): RunRow[] | Promise<RunRow[]>;
  /** The run's recorded events, in order, to replay its phase graph. */
  runEvents(adwId: string): RunEvent[] | Promise<RunEvent[]>;
  /** Continue a failed or interrupted run live (the composition root then shows its run screen). */
  resume(adwId: string): void;
  quit(): void;
  /** Open the doctor checklist (`d`); the composition root shows the doctor screen, then comes back. */
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

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}

/** Apply one home intent: the pure reducer decides, then the controller is called for what it accepted. */
export function dispatchHomeIntent(store: HomeStore, controller: HomeController, intent: HomeIntent): void {
  const { dispatch } = store.getState();
  switch (intent) {
    case 'up':
      dispatch({ type: 'move', by: -1 });
      return;
    case 'down':
      dispatch({ type: 'move', by: 1 });
      return;
    case 'open': {
      dispatch({ type: 'open' });
      const replay = store.getState().replay;
      if (store.getState().screen === 'run' && replay !== undefined && replay.run === undefined) {
        void loadReplay(store, controller, replay.adwId);
      }
      return;
    }
    case 'back':
      dispatch({ type: 'back' });
      // A run that was live may have finished meanwhile: the list is read again.
      void loadRuns(store, controller);
      return;
    case 'resume': {
      const before = store.getState().resuming;
      dispatch({ type: 'resume' });
      const after = store.getState().resuming;
      // Only when the reducer accepted it (a failed or interrupted run), and once per run.
      if (after !== undefined && after !== before) controller.resume(after);
      return;
    }
    case 'quit':
      dispatch({ type: 'quit' });
      controller.quit();
      return;
    case 'doctor':
      // Nothing in the home store changes: the doctor is its own screen, with its own store.
      controller.doctor?.();
      return;
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown home intent ${String(unreachable)}`);
    }
  }
}

// ── The bon screen (`factory bon`): the arms board, the diff view, apply with confirmation.

/** Implemented by the core (composition root) on top of the bon workflow and its RPC session. */
export interface BonController extends RunController {
  /** Abort arm `arm` (RPC abort): it ends red "aborted", the batch goes on. */
  abortArm(arm: number): void;
  /** Clone one more arm from the primer; the core announces it with `phase_planned`. */
  cloneArm(): void;
  /** Verify then apply arm `arm`'s patch (`git apply --index`). */
  apply(arm: number): void;
  /** The text of arm `arm`'s harvested patch. */
  readPatch(arm: number): string | Promise<string>;
}

export type BonIntent =
  | RunIntent
  | 'left' | 'right' | 'diff' | 'abort-arm' | 'clone' | 'ask-apply' | 'apply' | 'cancel-apply'
  | 'up' | 'down' | 'page-up' | 'page-down' | 'top' | 'bottom' | 'back'
  /** Ctrl-C where the screen shows something else than the board: acts as on the run screen. */
  | 'interrupt';

/**
 * The bon screen's input modes: the run screen's (running, aborting, confirm-quit, finished, quitting)
 * plus `diff` (an arm's patch on screen) and `confirm-apply` (`p` asked, waiting for y/n).
 */
export type BonMode = RunMode | 'diff' | 'confirm-apply';

export function bonModeOf(state: BonState): BonMode {
  const run = runModeOf(state);
  if (run === 'quitting') return run;
  if (state.bon.ui.confirmApply !== undefined) return 'confirm-apply';
  if (state.bon.ui.diff !== undefined) return 'diff';
  return run;
}

/** Rows the diff view scrolls by for PgUp/PgDn and clamps to: the view's height, known to the screen. */
export interface BonViewport {
  page: number;
}

function readPatchInto(store: BonStore, controller: BonController, arm: number): void {
  const { dispatch } = store.getState();
  const failed = (error: unknown) => dispatch({ type: 'diff_failed', arm, message: errorText(error) });
  try {
    const text = controller.readPatch(arm);
    if (typeof text === 'string') dispatch({ type: 'diff_loaded', arm, text });
    else text.then((loaded) => dispatch({ type: 'diff_loaded', arm, text: loaded }), failed);
  } catch (error) {
    failed(error);
  }
}

/** Apply one bon intent: the pure reducers decide, then the controller is called for what they accepted. */
export function dispatchBonIntent(store: BonStore, controller: BonController, intent: BonIntent, view: BonViewport): void {
  const { dispatch } = store.getState();
  const before = store.getState();
  switch (intent) {
    case 'abort':
    case 'confirm-quit':
    case 'stay':
    case 'quit':
    case 'doctor':
      dispatchRunIntent(store, controller, intent);
      return;
    case 'interrupt': {
      // The run screen's Ctrl-C: a first one aborts the running turn, a second one (or one after the end) quits.
      const mode = runModeOf(before);
      dispatchRunIntent(store, controller, mode === 'running' ? 'abort' : 'quit');
      return;
    }
    case 'left':
    case 'right':
      dispatch({ type: 'select', by: intent === 'left' ? -1 : 1 });
      return;
    case 'diff': {
      dispatch({ type: 'open_diff' });
      const diff = store.getState().bon.ui.diff;
      if (diff !== undefined && diff.status === 'loading' && diff !== before.bon.ui.diff) readPatchInto(store, controller, diff.arm);
      return;
    }
    case 'up':
    case 'down':
      dispatch({ type: 'scroll', by: intent === 'up' ? -1 : 1, page: view.page });
      return;
    case 'page-up':
    case 'page-down':
      dispatch({ type: 'scroll', by: (intent === 'page-up' ? -1 : 1) * Math.max(1, view.page - 1), page: view.page });
      return;
    case 'top':
    case 'bottom':
      dispatch({ type: 'scroll_to', to: intent, page: view.page });
      return;
    case 'back':
      dispatch({ type: 'close_diff' });
      return;
    case 'abort-arm': {
      dispatch({ type: 'abort_arm' });
      const arm = runningArm(before);
      if (arm !== undefined && store.getState().bon.arms[`arm_${arm}`]?.abortRequested && !before.bon.arms[`arm_${arm}`]?.abortRequested) {
        controller.abortArm(arm);
      }
      return;
    }
    case 'clone':
      dispatch({ type: 'clone' });
      if (store.getState().bon.ui.pendingClones > before.bon.ui.pendingClones) controller.cloneArm();
      return;
    case 'ask-apply':
      dispatch({ type: 'ask_apply' });
      return;
    case 'cancel-apply':
      dispatch({ type: 'cancel_apply' });
      return;
    case 'apply': {
      dispatch({ type: 'confirm_apply' });
      const applying = store.getState().bon.ui.applying;
      if (applying !== undefined && applying !== before.bon.ui.applying) controller.apply(applying);
      return;
    }
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown bon intent ${String(unreachable)}`);
    }
  }
}
