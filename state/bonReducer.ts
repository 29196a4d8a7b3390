// The bon reducers, pure. `reduceBonEvent` folds one core event: the run part by `reduceRun`, then the bon slice.
// `reduceBonUi` folds one board action (keys, patch text read) and returns, with the next state, the one effect the
// core must carry out when the action was accepted (read a patch, abort an arm, clone one, apply one); the bon
// screen's intents (bonIntents.ts) run it on the controller.

import type { RunEvent } from '../src/events.js';
import { oneLine } from '../src/text.js';
import { armsOf, harvestBegun, runningArm, selectedArm } from './bonSelectors.js';
import { armOfPhase, armPhase, extrasOf, initialBonSlice, MAX_ARMS, type ArmExtras, type BonSlice, type BonState, type BonUi } from './bonState.js';
import { reduceRun } from './runReducer.js';
import { isLive } from './runSelectors.js';
import type { RunState, RunUiState } from './runState.js';
import { stay, type Step } from './step.js';

function withArm(bon: BonSlice, phase: string, change: (arm: ArmExtras) => ArmExtras): BonSlice {
  return { ...bon, arms: { ...bon.arms, [phase]: change(extrasOf(bon, phase)) } };
}

function foldBon(bon: BonSlice, before: RunState, event: RunEvent): BonSlice {
  switch (event.type) {
    case 'run_started':
      return initialBonSlice();
    case 'usage': {
      // Counted like the run store counts figures: only while the arm's attempt is live.
      const phase = before.phases.find((p) => p.name === event.phase);
      if (armOfPhase(before, event.phase) === undefined || !isLive(phase)) return bon;
      return withArm(bon, event.phase, (arm) => ({ ...arm, turns: arm.turns + 1 }));
    }
    case 'activity': {
      if (armOfPhase(before, event.phase) === undefined || event.activity.kind !== 'tool_start') return bon;
      const call = oneLine(`${event.activity.tool} ${event.activity.detail}`);
      return withArm(bon, event.phase, (arm) => ({ ...arm, lastTool: call }));
    }
    case 'arm_patch':
      return withArm(bon, event.phase, (arm) => ({
        ...arm,
        patch: { file: event.patchFile, bytes: event.bytes, files: event.files.slice() },
      }));
    case 'phase_planned':
      if (event.phase.arm === undefined) return bon;
      return { ...bon, ui: { ...bon.ui, pendingClones: Math.max(0, bon.ui.pendingClones - 1) } };
    case 'harvest':
      return {
        ...bon,
        harvest: {
          ranking: event.ranking.map((rank) => ({ ...rank })),
          winner: event.winner,
          primer: { ...event.primer },
          harvestFile: event.harvestFile,
          applyCommand: event.applyCommand,
        },
        // No clone can come any more.
        ui: { ...bon.ui, pendingClones: 0 },
      };
    case 'run_finished':
      return { ...bon, ui: { ...bon.ui, pendingClones: 0 } };
    default:
      return bon;
  }
}

/** Fold one core event: the run part by `reduceRun`, then the bon slice. */
export function reduceBonEvent(state: BonState, event: RunEvent): BonState {
  if (event.type !== 'run_started' && state.adwId !== undefined && event.adwId !== state.adwId) return state;
  const run = reduceRun(state, event);
  return { ...run, bon: foldBon(state.bon, state, event) };
}

export type BonAction =
  | { type: 'select'; by: number }
  | { type: 'open_diff' }
  | { type: 'diff_loaded'; arm: number; text: string }
  | { type: 'diff_failed'; arm: number; message: string }
  | { type: 'scroll'; by: number; page: number }
  | { type: 'scroll_to'; to: 'top' | 'bottom'; page: number }
  | { type: 'close_diff' }
  | { type: 'abort_arm' }
  | { type: 'confirm_abort' }
  | { type: 'cancel_abort' }
  | { type: 'clone' }
  | { type: 'ask_apply' }
  | { type: 'cancel_apply' }
  | { type: 'confirm_apply' };

/** What the core must do for an accepted board action. */
export type BonEffect =
  /** Read arm `arm`'s harvested patch for the diff view. */
  | { type: 'read_patch'; arm: number }
  | { type: 'abort_arm'; arm: number }
  | { type: 'clone_arm' }
  /** Verify then apply arm `arm`'s patch. */
  | { type: 'apply'; arm: number };

export type BonStep = Step<BonState, BonEffect>;

function withUi(state: BonState, ui: Partial<BonUi>, statusLine?: string | null): BonState {
  const runUi: RunUiState = statusLine === undefined ? state.ui : { ...state.ui, statusLine: statusLine ?? undefined };
  return { ...state, ui: runUi, bon: { ...state.bon, ui: { ...state.bon.ui, ...ui } } };
}

function clampOffset(offset: number, lines: number, page: number): number {
  return Math.max(0, Math.min(offset, lines - Math.max(1, page)));
}

export function reduceBonUi(state: BonState, action: BonAction): BonStep {
  const ui = state.bon.ui;
  switch (action.type) {
    case 'select': {
      const arms = armsOf(state, 0).map((view) => view.arm);
      const current = selectedArm(state);
      if (arms.length === 0 || current === undefined) return stay(state);
      const index = Math.max(0, Math.min(arms.length - 1, arms.indexOf(current) + action.by));
      return stay(withUi(state, { selected: arms[index] }, null));
    }
    case 'open_diff': {
      const arm = selectedArm(state);
      if (arm === undefined) return stay(withUi(state, {}, 'no arm yet'));
      const patch = extrasOf(state.bon, armPhase(state, arm)).patch;
      if (patch === undefined) return stay(withUi(state, {}, `arm_${arm} has no patch yet (it is harvested when the arm ends)`));
      return { state: withUi(state, { diff: { arm, status: 'loading', lines: [], offset: 0 } }, null), effect: { type: 'read_patch', arm } };
    }
    case 'diff_loaded':
    case 'diff_failed': {
      // An answer for a diff the user already left (or another arm's) is dropped.
      if (ui.diff === undefined || ui.diff.arm !== action.arm || ui.diff.status !== 'loading') return stay(state);
      if (action.type === 'diff_failed') {
        return stay(withUi(state, { diff: { ...ui.diff, status: 'failed', error: oneLine(action.message) } }));
      }
      const lines = action.text.replace(/\n$/, '').split('\n');
      return stay(withUi(state, { diff: { ...ui.diff, status: 'ready', lines } }));
    }
    case 'scroll':
    case 'scroll_to': {
      if (ui.diff === undefined) return stay(state);
      const target = action.type === 'scroll' ? ui.diff.offset + action.by : action.to === 'top' ? 0 : ui.diff.lines.length;
      const offset = clampOffset(target, ui.diff.lines.length, action.page);
      return stay(offset === ui.diff.offset ? state : withUi(state, { diff: { ...ui.diff, offset } }));
    }
    case 'close_diff':
      return stay(withUi(state, { diff: undefined }));
    case 'abort_arm': {
      // Asks first: an aborted arm's turn (and what it spent) is lost for good.
      const arm = runningArm(state);
      if (arm === undefined) return stay(withUi(state, {}, 'no arm is running'));
      if (extrasOf(state.bon, armPhase(state, arm)).abortRequested) return stay(withUi(state, {}, `arm_${arm} is already being aborted`));
      return stay(withUi(state, { confirmAbort: arm }, `abort arm_${arm}? y aborts it (the other arms go on), n keeps it running`));
    }
    case 'cancel_abort':
      return stay(withUi(state, { confirmAbort: undefined }, `arm_${ui.confirmAbort ?? '?'} keeps running`));
    case 'confirm_abort': {
      const arm = ui.confirmAbort;
      // The arm may have ended while the question was on screen: nothing left to abort.
      if (arm === undefined || runningArm(state) !== arm) return stay(withUi(state, { confirmAbort: undefined }, arm === undefined ? undefined : `arm_${arm} has already ended`));
      const phase = armPhase(state, arm);
      const next = { ...state, bon: withArm(state.bon, phase, (extras) => ({ ...extras, abortRequested: true })) };
      return { state: withUi(next, { confirmAbort: undefined }, `aborting arm_${arm}… the other arms go on`), effect: { type: 'abort_arm', arm } };
    }
    case 'clone': {
      if (harvestBegun(state)) return stay(withUi(state, {}, 'the harvest has begun: no more arms'));
      const arms = armsOf(state, 0).length + ui.pendingClones;
      if (arms >= MAX_ARMS) return stay(withUi(state, {}, `already ${MAX_ARMS} arms: no more clones`));
      return {
        state: withUi(state, { pendingClones: ui.pendingClones + 1 }, `cloning arm_${arms + 1} from the primer…`),
        effect: { type: 'clone_arm' },
      };
    }
    case 'ask_apply': {
      if (state.bon.harvest === undefined) return stay(withUi(state, {}, 'apply waits for the harvest'));
      const arm = selectedArm(state);
      if (arm === undefined) return stay(withUi(state, {}, 'no arm to apply'));
      const patch = extrasOf(state.bon, armPhase(state, arm)).patch;
      if (patch === undefined || patch.bytes === 0) return stay(withUi(state, {}, `arm_${arm} has no patch to apply`));
      if (ui.applying !== undefined) return stay(withUi(state, {}, `arm_${ui.applying}'s patch was already handed over`));
      const view = armsOf(state, 0).find((candidate) => candidate.arm === arm);
      const red = view && view.status !== 'green' ? ` (it is ${view.status})` : '';
      return stay(withUi(state, { confirmApply: arm }, `apply arm_${arm}'s patch${red}? y applies, n cancels`));
    }
    case 'cancel_apply':
      return stay(withUi(state, { confirmApply: undefined }, 'apply cancelled'));
    case 'confirm_apply': {
      const arm = ui.confirmApply;
      if (arm === undefined) return stay(state);
      return {
        state: withUi(state, { confirmApply: undefined, applying: arm }, `applying arm_${arm}'s patch (verified first)…`),
        effect: { type: 'apply', arm },
      };
    }
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}
