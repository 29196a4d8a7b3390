// What the cockpit knows about one ADW run: the shapes the run reducer (./reducer.ts) folds the core's typed
// events (src/contract/events.ts) into, and the state a run starts from.
//
// Conventions the core must keep (also stated in the lead's report):
// - `attempt` numbers in events are 1-based, as shown to the user ("attempt 2/3").
// - a `usage` event carries the running figures of the current attempt only (not cumulative over attempts);
//   `phase_ok` / `phase_failed` / `run_finished` carry authoritative figures that replace the live ones.

import type { Activity, PhaseKind, FailureKind } from '../../src/contract/events.js';

export type PhaseStatus = 'pending' | 'running' | 'retrying' | 'ok' | 'failed' | 'skipped';

/** One line of a phase's activity tail: pi activity, or a failed attempt noted by the runner. */
export type TailItem =
  | Activity
  | { kind: 'attempt_failed'; attempt: number; attempts: number; motif: string; willRetry: boolean };

/** One zero-token gate's verdict, as a gates phase reported it (`gate_result`). */
export interface GateReport {
  gate: string;
  ok: boolean;
  motif?: string;
  seconds: number;
  /** Red on HEAD the same way (best-of-N's baseline): not held against the arm. */
  preexisting?: boolean;
}

export interface TailEntry {
  ts: number;
  item: TailItem;
}

/** How many activity lines each phase keeps: enough for any tail height, bounded for hour-long phases. */
export const TAIL_LIMIT = 50;

export interface PhaseState {
  name: string;
  kind: PhaseKind;
  status: PhaseStatus;
  /** Current (or last) attempt, 1-based; 0 before the phase starts. */
  attempt: number;
  /** Attempts allowed (1 + retries for agent phases). */
  attempts: number;
  startedAt?: number;
  finishedAt?: number;
  /** Wall time of a finished phase: its earlier runs plus the last one, as measured by the runner. */
  seconds?: number;
  /**
   * Wall time of the phase's earlier runs: a phase sent back by its judge (build re-run after red gates)
   * runs again, and its clock continues from there instead of restarting at zero.
   */
  earlierSeconds?: number;
  /** Phase figures: finished attempts plus the live usage of the running one. */
  tokens: number;
  cost: number;
  /** Figures of the attempts already over, so live usage can be added without double counting. */
  settledTokens: number;
  settledCost: number;
  /** A phase of a group that waits for a slot, in words, until it starts. */
  waiting?: string;
  /** Why the phase (or its last failed attempt) failed. */
  motif?: string;
  /** A best-of-N arm that ended with every gate red on HEAD the same way (its result says so): nothing verified it. */
  unverified?: boolean;
  /** Which attempt the motif belongs to (undefined when it is the phase's final motif). */
  motifAttempt?: number;
  /** Why, as a type (from the failure events; never read back from the motif's words). */
  failure?: FailureKind;
  /**
   * The phase judged an earlier one and sent it back (red gates → build again): it waits, shown ↻ with its
   * motif, until it runs again.
   */
  sentBack?: boolean;
  /** Gate verdicts of the phase's current (or last) run, in report order. */
  // The three fields above are optional so that a PhaseState written by hand (tests, other producers)
  // stays valid; the reducer always sets them.
  gates?: GateReport[];
  sessionId?: string;
  model?: string;
  /** A best-of-N arm's number, from the plan. */
  arm?: number;
  activity: TailEntry[];
}

export interface RunTotals {
  tokens: number;
  cost: number;
  startedAt?: number;
  finishedAt?: number;
  /** Wall time of the finished run, as measured by the runner. */
  seconds?: number;
}

/** UI-side state that no core event carries: what the keys have asked for so far. */
export interface RunUiState {
  /** One line telling the user what their last key did ("aborting the running turn…"). */
  statusLine?: string;
  /** A first Ctrl-C asked the core to abort the running turn. */
  abortRequested: boolean;
  /** `q` was pressed while the run is live: the next `q` (or Ctrl-C) quits. */
  quitArmed: boolean;
  /** quit() was sent to the controller; further keys are ignored. */
  quitting: boolean;
}

export interface RunState {
  adwId?: string;
  adwName?: string;
  cwd?: string;
  /** Phases in plan order. */
  phases: PhaseState[];
  /** The phase started last: the one whose activity the tail shows. */
  currentPhase?: string;
  totals: RunTotals;
  exit?: number;
  failedPhase?: string;
  interrupted: boolean;
  ui: RunUiState;
}

export const initialUi: RunUiState = { abortRequested: false, quitArmed: false, quitting: false };

export function initialRunState(): RunState {
  return { phases: [], totals: { tokens: 0, cost: 0 }, interrupted: false, ui: { ...initialUi } };
}
