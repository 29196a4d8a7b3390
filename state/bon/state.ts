// The bon state: what the cockpit knows about a best-of-N run. It is the run store's state (phases, totals, the
// Ctrl-C / q machine, folded by the very `reduceRun`) plus a bon slice: per-arm figures no PhaseState carries
// (turns, patch, last tool call, an abort asked by `a`), the harvest, and the board's UI (selected arm, diff
// view, apply confirmation, clones asked). Arms are the phases whose plan carries an arm number; the primer is the `prime`
// phase. The reducers are in ./reducer.ts, what the views derive in ./selectors.ts.

import type { ArmRank, JudgeOrder, RunEvent } from '../../src/contract/events.js';
import type { Overlap, Row } from '../../src/bon/harvest/overlap.js';
import { initialRunState, type RunState } from '../run/state.js';

/** The most arms a bon run may have (SPEC 3.7): `c` is refused at this count. One limit, the core's. */
export { MAX_ARMS } from '../../src/bon/check.js';
export const PRIMER_PHASE = 'prime';
export const HARVEST_PHASE = 'harvest';

/** The arm number of the phase named `phase`, from its plan (`PhasePlan.arm`); undefined for any other phase. */
export function armOfPhase(state: Pick<RunState, 'phases'>, phase: string): number | undefined {
  return state.phases.find((p) => p.name === phase)?.arm;
}

export interface ArmPatch {
  file: string;
  bytes: number;
  files: string[];
  /** Lines the patch adds and removes. */
  added?: number;
  removed?: number;
}

/** Where an arm stands against its cap: told to wrap up, at the cap, paused there (the board may raise it), raised. */
export type ArmSpendState = 'wrap_up' | 'capped' | 'paused' | 'raised';

/** What the bon slice remembers of one arm beyond its PhaseState. */
export interface ArmExtras {
  /** Assistant messages so far (one `usage` event each), over all attempts. */
  turns: number;
  /** The last tool call started, as `tool detail`. */
  lastTool?: string;
  patch?: ArmPatch;
  /** `a` asked the core to abort this arm: its red verdict reads "aborted". */
  abortRequested: boolean;
  /** Its cap (the last the core said) and where it stands against it. */
  cap?: number;
  spend?: ArmSpendState;
}

export interface BonHarvest {
  ranking: ArmRank[];
  /** The judge's order of the green arms, which the ranking follows. */
  judge?: JudgeOrder;
  winner?: number;
  /** The ranking's line on why #1 is first, as the harvest said it. */
  why?: string;
  primer: { tokens: number; cost: number; sessionId?: string };
  harvestFile: string;
  applyCommand?: string;
}

export interface DiffState {
  arm: number;
  status: 'loading' | 'ready' | 'failed';
  lines: string[];
  error?: string;
  /** First line shown. */
  offset: number;
}

/** Two or more arms' patches read side by side (`s`) or as their overlap (`o`), scrolled like the diff. */
export interface CompareState {
  kind: 'overlap' | 'side';
  arms: number[];
  status: 'loading' | 'ready' | 'failed';
  texts: Record<number, string>;
  error?: string;
  offset: number;
  /** Reckoned once, when every text is in. */
  overlap?: Overlap;
  rows?: Row[];
}

export interface BonUi {
  /** `m`: the message being typed for arm `arm` (enter sends it into its live session). */
  steer?: { arm: number; text: string };
  compare?: CompareState;
  /** The forecast asked y/n and the answer went to the core. */
  fanOutAnswered?: boolean;
  /** The arm the user chose with ←/→; undefined = the default (winner, else running arm, else the first). */
  selected?: number;
  diff?: DiffState;
  /** The arm whose patch `p` asked to apply; `y` confirms. */
  confirmApply?: number;
  /** The running arm `a` asked to abort (its turn and its tokens are lost); `y` confirms. */
  confirmAbort?: number;
  /** Arms asked for with `c` that no `phase_planned` has brought yet. */
  pendingClones: number;
  /** The arm whose apply was handed to the core. */
  applying?: number;
}

export interface BonSlice {
  arms: Record<string, ArmExtras>;
  harvest?: BonHarvest;
  /** The fan-out's forecast (before the arms), the gates' baseline on HEAD, what stopped the batch. */
  forecast?: Extract<RunEvent, { type: 'forecast' }>;
  baseline?: Extract<RunEvent, { type: 'baseline' }>;
  stop?: { motif: string; kind: string };
  /** The run's cap, once the core spoke of it (its wrap-up word, its stop). */
  runSpend?: { spent: number; cap: number; kind: ArmSpendState };
  ui: BonUi;
}

export interface BonState extends RunState {
  bon: BonSlice;
}

export function initialBonSlice(): BonSlice {
  return { arms: {}, ui: { pendingClones: 0 } };
}

export function initialBonState(): BonState {
  return { ...initialRunState(), bon: initialBonSlice() };
}

/** What the bon slice knows of arm phase `phase` (nothing yet: no turn, no abort asked). */
export function extrasOf(bon: BonSlice, phase: string): ArmExtras {
  return bon.arms[phase] ?? { turns: 0, abortRequested: false };
}

/** The phase name of arm `arm`, as planned. */
export function armPhase(state: Pick<RunState, 'phases'>, arm: number): string {
  return state.phases.find((p) => p.arm === arm)?.name ?? `arm_${arm}`;
}
