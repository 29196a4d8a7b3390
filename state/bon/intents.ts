// The bon screen's intents (`factory bon`): the arms board, the diff view, apply with confirmation. A key's
// intent becomes a board action (or, for the Ctrl-C / q machine, a run intent); the reducer decides, and the
// effect it returns is run here on the BonController the core implements.

import { scrollAction } from '../scrollAction.js';
import { errorText } from '../errorText.js';
import type { BonAction, BonEffect } from './reducer.js';
import type { BonState } from './state.js';
import type { BonStore } from './store.js';
import { dispatchRunIntent, runModeOf, type RunController, type RunIntent, type RunMode } from '../run/intents.js';
import { armsOf, verdictLines } from './selectors.js';

/** Implemented by the core (src/tui/run.ts bonScreenController) on top of the bon session. */
export interface BonController extends RunController {
  /** Abort arm `arm` (RPC abort): it ends red "aborted", the batch goes on. */
  abortArm(arm: number): void;
  /** Clone one more arm from the primer; the core announces it with `phase_planned`. */
  cloneArm(): void;
  /** Verify then apply arm `arm`'s patch (`git apply --index`). */
  apply(arm: number): void;
  /** The text of arm `arm`'s harvested patch. */
  readPatch(arm: number): string | Promise<string>;
  /** `+`: the arm paused at its cap gets as much again and goes on in its session. */
  raiseArm(arm: number): void;
  /** y / n to a forecast above the roster's threshold. */
  confirmFanOut(yes: boolean): void;
  /** The user's message into arm `arm`'s running turn (pi `steer`). */
  steerArm(arm: number, text: string): void;
}

export type BonIntent =
  | RunIntent
  | 'left'
  | 'right'
  | 'diff'
  | 'abort-arm'
  | 'confirm-abort'
  | 'cancel-abort'
  | 'clone'
  | 'ask-apply'
  | 'apply'
  | 'cancel-apply'
  | 'up'
  | 'down'
  | 'page-up'
  | 'page-down'
  | 'top'
  | 'bottom'
  | 'back'
  | 'raise'
  | 'fanout-yes'
  | 'fanout-no'
  | 'steer'
  | 'steer-send'
  | 'steer-erase'
  | 'steer-cancel'
  | 'overlap'
  | 'side'
  | 'next-pair'
  /** Ctrl-C where the screen shows something else than the board: acts as on the run screen. */
  | 'interrupt';

/**
 * The bon screen's input modes: the run screen's (running, aborting, confirm-quit, finished, quitting)
 * plus `diff` (an arm's patch on screen) and `confirm-apply` (`p` asked, waiting for y/n).
 */
export type BonMode = RunMode | 'diff' | 'confirm-apply' | 'confirm-abort' | 'confirm-fanout' | 'steer' | 'compare';

export function bonModeOf(state: BonState): BonMode {
  const run = runModeOf(state);
  if (run === 'quitting') return run;
  const ui = state.bon.ui;
  if (state.bon.forecast?.confirm === true && !ui.fanOutAnswered && run === 'running') return 'confirm-fanout';
  if (ui.confirmApply !== undefined) return 'confirm-apply';
  if (ui.confirmAbort !== undefined) return 'confirm-abort';
  if (ui.steer !== undefined) return 'steer';
  if (ui.compare !== undefined) return 'compare';
  if (ui.diff !== undefined) return 'diff';
  return run;
}

/** Text typed while a message is being written (`m`): it goes into the message, never to a key binding. */
export function typeIntoBoard(store: BonStore, text: string): void {
  if (store.getState().bon.ui.steer === undefined) return;
  store.getState().dispatch({ type: 'steer_input', text });
}

/** Rows the diff view scrolls by for PgUp/PgDn and clamps to: the view's height, known to the screen. */
export interface BonViewport {
  page: number;
}

/**
 * The arms' patches read by `read`, then handed to `loaded`; a read that throws or rejects goes to `failed`. Reads
 * that answer at once are handed over at once; one that answers later, once all have.
 */
function readPatches(
  read: (arm: number) => string | Promise<string>,
  arms: readonly number[],
  loaded: (texts: Record<number, string>) => void,
  failed: (error: unknown) => void,
): void {
  try {
    const reads = arms.map((arm) => read(arm));
    const textsOf = (texts: readonly string[]) =>
      Object.fromEntries(arms.map((arm, i) => [arm, texts[i]!])) as Record<number, string>;
    if (reads.every((text): text is string => typeof text === 'string')) loaded(textsOf(reads));
    // One read is awaited alone: the diff is ready one tick after its file is, not after a Promise.all's extra ticks.
    else if (reads.length === 1) Promise.resolve(reads[0]!).then((text) => loaded(textsOf([text])), failed);
    else Promise.all(reads).then((texts) => loaded(textsOf(texts)), failed);
  } catch (error) {
    failed(error);
  }
}

/**
 * The reads a board asks for — one arm's patch for the diff view (its whole verdict above it: the card cuts it), or
 * arms' patches for a comparison — with their answer dispatched back as board actions. The live board and the
 * home's replay of a finished one share it.
 */
export function readBoardPatches(
  effect: Extract<BonEffect, { type: 'read_patch' | 'read_patches' }>,
  state: BonState,
  read: (arm: number) => string | Promise<string>,
  dispatch: (action: BonAction) => void,
): void {
  if (effect.type === 'read_patches') {
    readPatches(
      read,
      effect.arms,
      (texts) => dispatch({ type: 'compare_loaded', texts }),
      (error) => dispatch({ type: 'compare_failed', message: errorText(error) }),
    );
    return;
  }
  const view = armsOf(state, Date.now()).find((candidate) => candidate.arm === effect.arm);
  const head = view ? `${verdictLines(view).join('\n')}\n` : '';
  readPatches(
    read,
    [effect.arm],
    (texts) => dispatch({ type: 'diff_loaded', arm: effect.arm, text: `${head}${texts[effect.arm]!}` }),
    (error) => dispatch({ type: 'diff_failed', arm: effect.arm, message: errorText(error) }),
  );
}

/** Carry out what the board reducer asked for. */
export function runBonEffect(store: BonStore, controller: BonController, effect: BonEffect | undefined): void {
  if (effect === undefined) return;
  switch (effect.type) {
    case 'read_patch':
    case 'read_patches':
      readBoardPatches(
        effect,
        store.getState(),
        (arm) => controller.readPatch(arm),
        (action) => store.getState().dispatch(action),
      );
      return;
    case 'abort_arm':
      controller.abortArm(effect.arm);
      return;
    case 'clone_arm':
      controller.cloneArm();
      return;
    case 'apply':
      controller.apply(effect.arm);
      return;
    case 'raise_arm':
      controller.raiseArm(effect.arm);
      return;
    case 'answer_fanout':
      controller.confirmFanOut(effect.yes);
      return;
    case 'steer':
      controller.steerArm(effect.arm, effect.text);
      return;
    default: {
      const unreachable: never = effect;
      throw new Error(`unknown bon effect ${String(unreachable)}`);
    }
  }
}

/** The board action of each board intent; PgUp/PgDn keep one line of the last page in view. */
export function boardAction(intent: Exclude<BonIntent, RunIntent | 'interrupt'>, view: BonViewport): BonAction {
  switch (intent) {
    case 'left':
    case 'right':
      return { type: 'select', by: intent === 'left' ? -1 : 1 };
    case 'diff':
      return { type: 'open_diff' };
    case 'up':
    case 'down':
    case 'page-up':
    case 'page-down':
    case 'top':
    case 'bottom':
      return scrollAction(intent, view.page);
    case 'back':
      return { type: 'close_diff' };
    case 'abort-arm':
      return { type: 'abort_arm' };
    case 'confirm-abort':
      return { type: 'confirm_abort' };
    case 'cancel-abort':
      return { type: 'cancel_abort' };
    case 'clone':
      return { type: 'clone' };
    case 'ask-apply':
      return { type: 'ask_apply' };
    case 'cancel-apply':
      return { type: 'cancel_apply' };
    case 'apply':
      return { type: 'confirm_apply' };
    case 'raise':
      return { type: 'raise_arm' };
    case 'fanout-yes':
    case 'fanout-no':
      return { type: 'answer_fanout', yes: intent === 'fanout-yes' };
    case 'steer':
      return { type: 'steer_open' };
    case 'steer-send':
      return { type: 'steer_send' };
    case 'steer-erase':
      return { type: 'steer_erase' };
    case 'steer-cancel':
      return { type: 'steer_cancel' };
    case 'overlap':
    case 'side':
      return { type: 'compare_open', kind: intent };
    case 'next-pair':
      return { type: 'compare_next' };
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown bon intent ${String(unreachable)}`);
    }
  }
}

/** Apply one bon intent: the pure reducers decide, then their effect is run on the controller. */
export function dispatchBonIntent(
  store: BonStore,
  controller: BonController,
  intent: BonIntent,
  view: BonViewport,
): void {
  switch (intent) {
    case 'abort':
    case 'confirm-quit':
    case 'stay':
    case 'quit':
    case 'doctor':
      dispatchRunIntent(store, controller, intent);
      return;
    case 'interrupt':
      // The run screen's Ctrl-C: a first one aborts the running turn, a second one (or one after the end) quits.
      dispatchRunIntent(store, controller, runModeOf(store.getState()) === 'running' ? 'abort' : 'quit');
      return;
    default:
      runBonEffect(store, controller, store.getState().dispatch(boardAction(intent, view)));
  }
}
