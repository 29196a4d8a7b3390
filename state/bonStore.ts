// The bon store: what the cockpit knows about a best-of-N run. It is the run store's state (phases, totals,
// the Ctrl-C / q machine, folded by the very `reduceRun`) plus a bon slice: per-arm figures no PhaseState
// carries (turns, patch, last tool call, an abort asked by `a`), the harvest, and the board's UI (selected
// arm, diff view, apply confirmation, clones asked). Arms are the phases named `arm_1..arm_N`; the primer
// is the `prime` phase. Everything here is pure: the reducers are unit-tested, the views derive from
// `armsOf` / `primerLine`, and state/controller.ts calls the core for what a reducer accepted.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ArmRank, RunEvent } from '../src/events.js';
import { primerLine as corePrimerLine } from '../src/bon/rank.js';
import { formatCost, formatTokens, oneLine } from '../src/format.js';
import { initialRunState, reduceRun, type GateReport, type PhaseState, type RunState, type RunUiState } from './runStore.js';

/** The most arms a bon run may have (SPEC 3.7): `c` is refused at this count. */
export const MAX_ARMS = 5;
export const PRIMER_PHASE = 'prime';
export const HARVEST_PHASE = 'harvest';

const ARM_NAME = /^arm_(\d+)$/;

/** The arm number of a phase name (`arm_3` → 3), undefined for any other phase. */
export function armNumber(phase: string): number | undefined {
  const match = ARM_NAME.exec(phase);
  return match ? Number(match[1]) : undefined;
}

export interface ArmPatch {
  file: string;
  bytes: number;
  files: string[];
}

/** What the bon slice remembers of one arm beyond its PhaseState. */
export interface ArmExtras {
  /** Assistant messages so far (one `usage` event each), over all attempts. */
  turns: number;
  /** The last tool call started, as `tool detail`. */
  lastTool?: string;
  patch?: ArmPatch;
  /** `a` asked the core to abort this arm: its red verdict reads "aborted". */
  abortRequested: boolean;
}

export interface BonHarvest {
  ranking: ArmRank[];
  winner?: number;
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

export interface BonUi {
  /** The arm the user chose with ←/→; undefined = the default (winner, else running arm, else the first). */
  selected?: number;
  diff?: DiffState;
  /** The arm whose patch `p` asked to apply; `y` confirms. */
  confirmApply?: number;
  /** Arms asked for with `c` that no `phase_planned` has brought yet. */
  pendingClones: number;
  /** The arm whose apply was handed to the core. */
  applying?: number;
}

export interface BonSlice {
  arms: Record<string, ArmExtras>;
  harvest?: BonHarvest;
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

function extrasOf(bon: BonSlice, phase: string): ArmExtras {
  return bon.arms[phase] ?? { turns: 0, abortRequested: false };
}

function withArm(bon: BonSlice, phase: string, change: (arm: ArmExtras) => ArmExtras): BonSlice {
  return { ...bon, arms: { ...bon.arms, [phase]: change(extrasOf(bon, phase)) } };
}

function isLive(phase: PhaseState | undefined): boolean {
  return phase !== undefined && (phase.status === 'running' || phase.status === 'retrying');
}

function foldBon(bon: BonSlice, before: RunState, event: RunEvent): BonSlice {
  switch (event.type) {
    case 'run_started':
      return initialBonSlice();
    case 'usage': {
      // Counted like the run store counts figures: only while the arm's attempt is live.
      const phase = before.phases.find((p) => p.name === event.phase);
      if (armNumber(event.phase) === undefined || !isLive(phase)) return bon;
      return withArm(bon, event.phase, (arm) => ({ ...arm, turns: arm.turns + 1 }));
    }
    case 'activity': {
      if (armNumber(event.phase) === undefined || event.activity.kind !== 'tool_start') return bon;
      const call = oneLine(`${event.activity.tool} ${event.activity.detail}`);
      return withArm(bon, event.phase, (arm) => ({ ...arm, lastTool: call }));
    }
    case 'arm_patch':
      return withArm(bon, event.phase, (arm) => ({
        ...arm,
        patch: { file: event.patchFile, bytes: event.bytes, files: event.files.slice() },
      }));
    case 'phase_planned':
      if (armNumber(event.phase.name) === undefined) return bon;
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

// ── Derived views ────────────────────────────────────────────────────────────────────────────────────

export type ArmStatus = 'pending' | 'running' | 'green' | 'red' | 'aborted' | 'crashed';

export interface ArmView {
  arm: number;
  phase: string;
  model?: string;
  status: ArmStatus;
  /** The abort was asked and the arm still runs. */
  aborting: boolean;
  turns: number;
  tokens: number;
  cost: number;
  /** Measured when finished, ticking while running; undefined before it starts. */
  seconds?: number;
  patch?: ArmPatch;
  gates: GateReport[];
  motif?: string;
  lastTool?: string;
  /** 1-based place in the harvest ranking. */
  rank?: number;
  winner: boolean;
}

function secondsOf(phase: PhaseState, now: number): number | undefined {
  if (phase.seconds !== undefined) return phase.seconds;
  if (phase.startedAt === undefined) return undefined;
  return (phase.earlierSeconds ?? 0) + Math.max(0, ((phase.finishedAt ?? now) - phase.startedAt) / 1000);
}

function statusOf(phase: PhaseState, extras: ArmExtras, rank: ArmRank | undefined): ArmStatus {
  if (phase.status === 'pending' || phase.status === 'skipped') return 'pending';
  if (isLive(phase)) return 'running';
  const motif = phase.motif ?? rank?.motif ?? '';
  if (phase.status === 'failed' || rank?.green === false || (phase.gates ?? []).some((gate) => !gate.ok)) {
    if (extras.abortRequested || /^(aborted|interrupted)\b/i.test(motif)) return 'aborted';
    // A red gate is the arm's own failure, whatever its output says (`npm test` exited 1…).
    if ((phase.gates ?? []).some((gate) => !gate.ok)) return 'red';
    if (/^crashed\b|\bpi (?:process )?(?:exited|died|was killed|crashed)\b/i.test(motif)) return 'crashed';
    return 'red';
  }
  return 'green';
}

function redGateMotif(gates: readonly GateReport[]): string | undefined {
  const red = gates.find((gate) => !gate.ok);
  if (red === undefined) return undefined;
  return red.motif ? oneLine(red.motif) : `${red.gate} failed`;
}

/** The arms in plan order, with everything the board shows. `now` drives the running arm's clock. */
export function armsOf(state: BonState, now: number): ArmView[] {
  const ranking = state.bon.harvest?.ranking ?? [];
  const views: ArmView[] = [];
  for (const phase of state.phases) {
    const arm = armNumber(phase.name);
    if (arm === undefined) continue;
    const extras = extrasOf(state.bon, phase.name);
    const rankIndex = ranking.findIndex((rank) => rank.arm === arm);
    const rank = rankIndex === -1 ? undefined : ranking[rankIndex];
    const status = statusOf(phase, extras, rank);
    const gates = phase.gates ?? [];
    const motif = status === 'green' || status === 'pending' || status === 'running'
      ? undefined
      : oneLine(phase.motif ?? rank?.motif ?? redGateMotif(gates) ?? (status === 'aborted' ? 'aborted' : 'red'));
    views.push({
      arm,
      phase: phase.name,
      model: phase.model ?? rank?.model,
      status,
      aborting: extras.abortRequested && status === 'running',
      turns: extras.turns,
      tokens: phase.tokens,
      cost: phase.cost,
      seconds: secondsOf(phase, now),
      patch: extras.patch,
      gates,
      motif,
      lastTool: extras.lastTool,
      rank: rank ? rankIndex + 1 : undefined,
      winner: state.bon.harvest?.winner === arm,
    });
  }
  return views;
}

export function primerOf(state: RunState): PhaseState | undefined {
  return state.phases.find((phase) => phase.name === PRIMER_PHASE);
}

/** The arm the board highlights and `p` / `enter` act on: chosen, else the winner, else the running one, else the first. */
export function selectedArm(state: BonState): number | undefined {
  const arms = state.phases.map((phase) => armNumber(phase.name)).filter((arm): arm is number => arm !== undefined);
  const chosen = state.bon.ui.selected;
  if (chosen !== undefined && arms.includes(chosen)) return chosen;
  const winner = state.bon.harvest?.winner;
  if (winner !== undefined && arms.includes(winner)) return winner;
  const running = state.phases.find((phase) => armNumber(phase.name) !== undefined && isLive(phase));
  if (running) return armNumber(running.name);
  return arms[0];
}

/** The one arm running now (arms run one after another on the primer's pi process). */
export function runningArm(state: BonState): number | undefined {
  const phase = state.phases.find((p) => armNumber(p.name) !== undefined && isLive(p));
  return phase ? armNumber(phase.name) : undefined;
}

/** The harvest phase has begun or is over, or its event arrived: the arm list is closed. */
export function harvestBegun(state: BonState): boolean {
  if (state.bon.harvest !== undefined || state.exit !== undefined) return true;
  const harvest = state.phases.find((phase) => phase.name === HARVEST_PHASE);
  return harvest !== undefined && harvest.status !== 'pending';
}

/** The primer paid once (SPEC 3.7): live, its figures; after the harvest, the core's full account. */
export function primerLine(primer: { tokens: number; cost: number }, arms: number, harvested: boolean): string {
  if (!harvested || arms < 2) return `primer: ${formatTokens(primer.tokens)} tokens, ${formatCost(primer.cost)}, paid once`;
  return corePrimerLine(primer, arms);
}

// ── UI actions (keys) ────────────────────────────────────────────────────────────────────────────────

export type BonAction =
  | { type: 'select'; by: number }
  | { type: 'open_diff' }
  | { type: 'diff_loaded'; arm: number; text: string }
  | { type: 'diff_failed'; arm: number; message: string }
  | { type: 'scroll'; by: number; page: number }
  | { type: 'scroll_to'; to: 'top' | 'bottom'; page: number }
  | { type: 'close_diff' }
  | { type: 'abort_arm' }
  | { type: 'clone' }
  | { type: 'ask_apply' }
  | { type: 'cancel_apply' }
  | { type: 'confirm_apply' };

function withUi(state: BonState, ui: Partial<BonUi>, statusLine?: string | null): BonState {
  const runUi: RunUiState = statusLine === undefined ? state.ui : { ...state.ui, statusLine: statusLine ?? undefined };
  return { ...state, ui: runUi, bon: { ...state.bon, ui: { ...state.bon.ui, ...ui } } };
}

function armPhase(arm: number): string {
  return `arm_${arm}`;
}

function clampOffset(offset: number, lines: number, page: number): number {
  return Math.max(0, Math.min(offset, lines - Math.max(1, page)));
}

export function reduceBonUi(state: BonState, action: BonAction): BonState {
  const ui = state.bon.ui;
  switch (action.type) {
    case 'select': {
      const arms = armsOf(state, 0).map((view) => view.arm);
      const current = selectedArm(state);
      if (arms.length === 0 || current === undefined) return state;
      const index = Math.max(0, Math.min(arms.length - 1, arms.indexOf(current) + action.by));
      return withUi(state, { selected: arms[index] }, null);
    }
    case 'open_diff': {
      const arm = selectedArm(state);
      if (arm === undefined) return withUi(state, {}, 'no arm yet');
      const patch = extrasOf(state.bon, armPhase(arm)).patch;
      if (patch === undefined) return withUi(state, {}, `arm_${arm} has no patch yet (it is harvested when the arm ends)`);
      return withUi(state, { diff: { arm, status: 'loading', lines: [], offset: 0 } }, null);
    }
    case 'diff_loaded':
    case 'diff_failed': {
      // An answer for a diff the user already left (or another arm's) is dropped.
      if (ui.diff === undefined || ui.diff.arm !== action.arm || ui.diff.status !== 'loading') return state;
      if (action.type === 'diff_failed') {
        return withUi(state, { diff: { ...ui.diff, status: 'failed', error: oneLine(action.message) } });
      }
      const lines = action.text.replace(/\n$/, '').split('\n');
      return withUi(state, { diff: { ...ui.diff, status: 'ready', lines } });
    }
    case 'scroll':
    case 'scroll_to': {
      if (ui.diff === undefined) return state;
      const target = action.type === 'scroll' ? ui.diff.offset + action.by : action.to === 'top' ? 0 : ui.diff.lines.length;
      const offset = clampOffset(target, ui.diff.lines.length, action.page);
      return offset === ui.diff.offset ? state : withUi(state, { diff: { ...ui.diff, offset } });
    }
    case 'close_diff':
      return withUi(state, { diff: undefined });
    case 'abort_arm': {
      const arm = runningArm(state);
      if (arm === undefined) return withUi(state, {}, 'no arm is running');
      const phase = armPhase(arm);
      if (extrasOf(state.bon, phase).abortRequested) return withUi(state, {}, `arm_${arm} is already being aborted`);
      const next = { ...state, bon: withArm(state.bon, phase, (extras) => ({ ...extras, abortRequested: true })) };
      return withUi(next, {}, `aborting arm_${arm}… the other arms go on`);
    }
    case 'clone': {
      if (harvestBegun(state)) return withUi(state, {}, 'the harvest has begun: no more arms');
      const arms = armsOf(state, 0).length + ui.pendingClones;
      if (arms >= MAX_ARMS) return withUi(state, {}, `already ${MAX_ARMS} arms: no more clones`);
      return withUi(state, { pendingClones: ui.pendingClones + 1 }, `cloning arm_${arms + 1} from the primer…`);
    }
    case 'ask_apply': {
      if (state.bon.harvest === undefined) return withUi(state, {}, 'apply waits for the harvest');
      const arm = selectedArm(state);
      if (arm === undefined) return withUi(state, {}, 'no arm to apply');
      const patch = extrasOf(state.bon, armPhase(arm)).patch;
      if (patch === undefined || patch.bytes === 0) return withUi(state, {}, `arm_${arm} has no patch to apply`);
      if (ui.applying !== undefined) return withUi(state, {}, `arm_${ui.applying}'s patch was already handed over`);
      const view = armsOf(state, 0).find((candidate) => candidate.arm === arm);
      const red = view && view.status !== 'green' ? ` (it is ${view.status})` : '';
      return withUi(state, { confirmApply: arm }, `apply arm_${arm}'s patch${red}? y applies, n cancels`);
    }
    case 'cancel_apply':
      return withUi(state, { confirmApply: undefined }, 'apply cancelled');
    case 'confirm_apply': {
      const arm = ui.confirmApply;
      if (arm === undefined) return state;
      return withUi(state, { confirmApply: undefined, applying: arm }, `applying arm_${arm}'s patch (verified first)…`);
    }
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

export interface BonActions {
  /** Fold one core event into the state. */
  apply(event: RunEvent): void;
  /** Replace part of the run UI state (the Ctrl-C / q machine shared with the run screen). */
  setUi(patch: Partial<RunUiState>): void;
  /** Fold one board action (keys, patch text read). */
  dispatch(action: BonAction): void;
}

export type BonStoreState = BonState & BonActions;
export type BonStore = StoreApi<BonStoreState>;

export function createBonStore(initial: BonState = initialBonState()): BonStore {
  return createStore<BonStoreState>()((set) => ({
    ...initial,
    apply: (event) => set((state) => reduceBonEvent(state, event)),
    setUi: (patch) => set((state) => ({ ui: { ...state.ui, ...patch } })),
    dispatch: (action) => set((state) => reduceBonUi(state, action)),
  }));
}
