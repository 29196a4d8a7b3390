// The bon reducers, pure. `reduceBonEvent` folds one core event: the run part by `reduceRun`, then the bon slice.
// `reduceBonUi` folds one board action (keys, patch text read) and returns, with the next state, the one effect the
// core must carry out when the action was accepted (read a patch, abort an arm, clone one, apply one); the bon
// screen's intents (./intents.ts) run it on the controller.

import type { RunEvent } from '../../src/contract/events.js';
import { flatLine } from '../../src/contract/text.js';
import { armsOf, harvestBegun, runningArm, selectedArm } from './selectors.js';
import {
  armOfPhase,
  armPhase,
  extrasOf,
  initialBonSlice,
  MAX_ARMS,
  type ArmExtras,
  type BonSlice,
  type BonState,
  type BonUi,
  type CompareState,
} from './state.js';
import { armOverlap, sideBySide } from '../../src/bon/harvest/overlap.js';
import { reduceRun } from '../run/reducer.js';
import { isLive } from '../run/selectors.js';
import type { RunState, RunUiState } from '../run/state.js';
import { stay, type Step } from '../step.js';
import type { BonAction, BonEffect } from './actions.js';

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
      const call = flatLine(`${event.activity.tool} ${event.activity.detail}`);
      return withArm(bon, event.phase, (arm) => ({ ...arm, lastTool: call }));
    }
    case 'arm_patch':
      return withArm(bon, event.phase, (arm) => ({
        ...arm,
        patch: {
          file: event.patchFile,
          bytes: event.bytes,
          files: event.files.slice(),
          ...(event.added !== undefined ? { added: event.added, removed: event.removed ?? 0 } : {}),
        },
      }));
    case 'forecast':
      return { ...bon, forecast: event };
    case 'baseline':
      return { ...bon, baseline: event };
    case 'race_stop':
      return { ...bon, stop: { motif: event.motif, kind: event.kind } };
    case 'spend':
      if (event.scope === 'run' || event.phase === undefined)
        return { ...bon, runSpend: { spent: event.spent, cap: event.cap, kind: event.kind } };
      return withArm(bon, event.phase, (arm) => ({ ...arm, cap: event.cap, spend: event.kind }));
    case 'phase_planned':
    case 'clone_refused':
      // A clone asked for is answered: planned (an arm phase), or refused.
      if (event.type === 'phase_planned' && event.phase.arm === undefined) return bon;
      return { ...bon, ui: { ...bon.ui, pendingClones: Math.max(0, bon.ui.pendingClones - 1) } };
    case 'harvest':
      return {
        ...bon,
        harvest: {
          ranking: event.ranking.map((rank) => ({ ...rank })),
          winner: event.winner,
          ...(event.why !== undefined ? { why: event.why } : {}),
          primer: { ...event.primer },
          harvestFile: event.harvestFile,
          applyCommand: event.applyCommand,
          ...(event.judge ? { judge: event.judge } : {}),
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
  const next = { ...run, bon: foldBon(state.bon, state, event) };
  // A refused clone says why where `c` said "cloning…".
  return event.type === 'clone_refused' ? withUi(next, {}, event.motif) : next;
}

export type { BonAction, BonEffect } from './actions.js';

export type BonStep = Step<BonState, BonEffect>;

function withUi(state: BonState, ui: Partial<BonUi>, statusLine?: string | null): BonState {
  const runUi: RunUiState = statusLine === undefined ? state.ui : { ...state.ui, statusLine: statusLine ?? undefined };
  return { ...state, ui: runUi, bon: { ...state.bon, ui: { ...state.bon.ui, ...ui } } };
}

/** The arms whose patch is harvested and not empty, in board order. */
function patchedArms(state: BonState): number[] {
  return armsOf(state, 0)
    .filter((view) => (view.patch?.bytes ?? 0) > 0)
    .map((view) => view.arm);
}

/** The side-by-side pair: the selected arm (else the first with a patch) and the next one with a patch after `from`. */
function sidePair(arms: number[], left: number, after: number): number[] {
  const others = arms.filter((arm) => arm !== left);
  const next = others.find((arm) => arm > after) ?? others[0];
  return next === undefined ? [left] : [left, next];
}

/** Lines a compare view holds (for scrolling): the overlap's hunks or the side-by-side rows. */
export function compareLines(compare: CompareState): number {
  if (compare.rows) return compare.rows.length;
  if (!compare.overlap) return 0;
  const hunks = [
    ...compare.overlap.shared,
    ...compare.overlap.partial.map((p) => p.hunk),
    ...[...compare.overlap.unique.values()].flat(),
  ];
  return compare.arms.length + hunks.reduce((sum, h) => sum + 1 + h.lines.length, 0) + 3;
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
      if (patch === undefined)
        return stay(withUi(state, {}, `arm_${arm} has no patch yet (it is harvested when the arm ends)`));
      return {
        state: withUi(state, { diff: { arm, status: 'loading', lines: [], offset: 0 } }, null),
        effect: { type: 'read_patch', arm },
      };
    }
    case 'diff_loaded':
    case 'diff_failed': {
      // An answer for a diff the user already left (or another arm's) is dropped.
      if (ui.diff === undefined || ui.diff.arm !== action.arm || ui.diff.status !== 'loading') return stay(state);
      if (action.type === 'diff_failed') {
        return stay(withUi(state, { diff: { ...ui.diff, status: 'failed', error: flatLine(action.message) } }));
      }
      const lines = action.text.replace(/\n$/, '').split('\n');
      return stay(withUi(state, { diff: { ...ui.diff, status: 'ready', lines } }));
    }
    case 'scroll':
    case 'scroll_to': {
      if (ui.compare !== undefined) {
        const total = compareLines(ui.compare);
        const target = action.type === 'scroll' ? ui.compare.offset + action.by : action.to === 'top' ? 0 : total;
        return stay(withUi(state, { compare: { ...ui.compare, offset: clampOffset(target, total, action.page) } }));
      }
      if (ui.diff === undefined) return stay(state);
      const target =
        action.type === 'scroll' ? ui.diff.offset + action.by : action.to === 'top' ? 0 : ui.diff.lines.length;
      const offset = clampOffset(target, ui.diff.lines.length, action.page);
      return stay(offset === ui.diff.offset ? state : withUi(state, { diff: { ...ui.diff, offset } }));
    }
    case 'close_diff':
      return stay(withUi(state, { diff: undefined, compare: undefined }));
    case 'raise_arm': {
      const arm = selectedArm(state);
      const extras = arm === undefined ? undefined : extrasOf(state.bon, armPhase(state, arm));
      if (arm === undefined || extras?.spend !== 'paused')
        return stay(withUi(state, {}, 'no arm is paused at its cap (select one with ←/→)'));
      return {
        state: withUi(state, {}, `arm_${arm} gets as much again: it goes on where it stopped`),
        effect: { type: 'raise_arm', arm },
      };
    }
    case 'answer_fanout':
      if (state.bon.forecast?.confirm !== true || ui.fanOutAnswered) return stay(state);
      return {
        state: withUi(state, { fanOutAnswered: true }, action.yes ? 'fanning out…' : 'fan-out declined: no arm starts'),
        effect: { type: 'answer_fanout', yes: action.yes },
      };
    case 'steer_open': {
      const arm = selectedArm(state);
      const view = armsOf(state, 0).find((candidate) => candidate.arm === arm);
      if (arm === undefined || view?.status !== 'running')
        return stay(withUi(state, {}, 'select a running arm to send it a message'));
      return stay(withUi(state, { steer: { arm, text: '' } }, null));
    }
    case 'steer_input': {
      if (!ui.steer) return stay(state);
      // Typed or pasted: control characters never reach the message (nor the terminal).
      const text = action.text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
      return stay(withUi(state, { steer: { ...ui.steer, text: (ui.steer.text + text).slice(0, 2000) } }));
    }
    case 'steer_erase':
      if (!ui.steer) return stay(state);
      return stay(withUi(state, { steer: { ...ui.steer, text: [...ui.steer.text].slice(0, -1).join('') } }));
    case 'steer_cancel':
      return stay(withUi(state, { steer: undefined }, 'message not sent'));
    case 'steer_send': {
      if (!ui.steer) return stay(state);
      const { arm, text } = ui.steer;
      if (text.trim() === '') return stay(withUi(state, {}, 'type a message first (esc cancels)'));
      return {
        state: withUi(state, { steer: undefined }, `sending to arm_${arm}…`),
        effect: { type: 'steer', arm, text },
      };
    }
    case 'compare_open': {
      const arms = patchedArms(state);
      if (arms.length < 2) return stay(withUi(state, {}, 'two arms with a patch are needed to compare'));
      const left = selectedArm(state);
      const chosen =
        action.kind === 'overlap'
          ? arms
          : sidePair(arms, left !== undefined && arms.includes(left) ? left : arms[0]!, left ?? 0);
      return {
        state: withUi(
          state,
          { compare: { kind: action.kind, arms: chosen, status: 'loading', texts: {}, offset: 0 } },
          null,
        ),
        effect: { type: 'read_patches', arms: chosen },
      };
    }
    case 'compare_next': {
      const compare = ui.compare;
      if (compare?.kind !== 'side' || compare.arms.length < 2) return stay(state);
      const arms = sidePair(patchedArms(state), compare.arms[0]!, compare.arms[1]!);
      return {
        state: withUi(state, {
          compare: { ...compare, arms, status: 'loading', texts: {}, offset: 0, rows: undefined },
        }),
        effect: { type: 'read_patches', arms },
      };
    }
    case 'compare_loaded': {
      const compare = ui.compare;
      if (!compare || compare.status !== 'loading' || compare.arms.some((arm) => action.texts[arm] === undefined))
        return stay(state);
      const texts = action.texts;
      const ready: CompareState =
        compare.kind === 'overlap'
          ? {
              ...compare,
              status: 'ready',
              texts,
              overlap: armOverlap(compare.arms.map((arm) => ({ arm, patch: texts[arm]! }))),
            }
          : {
              ...compare,
              status: 'ready',
              texts,
              rows: sideBySide(texts[compare.arms[0]!]!, texts[compare.arms[1]!]!),
            };
      return stay(withUi(state, { compare: ready }));
    }
    case 'compare_failed':
      if (!ui.compare) return stay(state);
      return stay(withUi(state, { compare: { ...ui.compare, status: 'failed', error: flatLine(action.message) } }));
    case 'abort_arm': {
      // Asks first: an aborted arm's turn (and what it spent) is lost for good.
      const arm = runningArm(state);
      if (arm === undefined) return stay(withUi(state, {}, 'no arm is running'));
      if (extrasOf(state.bon, armPhase(state, arm)).abortRequested)
        return stay(withUi(state, {}, `arm_${arm} is already being aborted`));
      return stay(
        withUi(
          state,
          { confirmAbort: arm },
          `abort arm_${arm}? y aborts it (the other arms go on), n keeps it running`,
        ),
      );
    }
    case 'cancel_abort':
      return stay(withUi(state, { confirmAbort: undefined }, `arm_${ui.confirmAbort ?? '?'} keeps running`));
    case 'confirm_abort': {
      const arm = ui.confirmAbort;
      // The arm may have ended while the question was on screen: nothing left to abort.
      if (arm === undefined || runningArm(state) !== arm)
        return stay(
          withUi(state, { confirmAbort: undefined }, arm === undefined ? undefined : `arm_${arm} has already ended`),
        );
      const phase = armPhase(state, arm);
      const next = { ...state, bon: withArm(state.bon, phase, (extras) => ({ ...extras, abortRequested: true })) };
      return {
        state: withUi(next, { confirmAbort: undefined }, `aborting arm_${arm}… the other arms go on`),
        effect: { type: 'abort_arm', arm },
      };
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
      // Without a choice, `p` takes only the harvest's winner: an unverified (or red) arm is applied only when chosen.
      const harvest = state.bon.harvest;
      if (ui.selected === undefined && harvest.winner === undefined) {
        const best = harvest.ranking[0];
        const why = best?.unverified ? `no verified arm: arm_${best.arm} is unverified` : 'no green arm';
        return stay(withUi(state, {}, `${why} — choose an arm with ←/→, then p, to apply it anyway`));
      }
      const arm = selectedArm(state);
      if (arm === undefined) return stay(withUi(state, {}, 'no arm to apply'));
      const patch = extrasOf(state.bon, armPhase(state, arm)).patch;
      if (patch === undefined || patch.bytes === 0) return stay(withUi(state, {}, `arm_${arm} has no patch to apply`));
      if (ui.applying !== undefined)
        return stay(withUi(state, {}, `arm_${ui.applying}'s patch was already handed over`));
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
        state: withUi(
          state,
          { confirmApply: undefined, applying: arm },
          `applying arm_${arm}'s patch (verified first)…`,
        ),
        effect: { type: 'apply', arm },
      };
    }
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}
