// The run store: what the cockpit knows about one ADW run, rebuilt only from the core's typed events
// (src/events.ts). `reduceRun` is pure so the headless printer, replay of a stored run and the tests can
// all use the exact same folding; `createRunStore` wraps it in a zustand vanilla store for the Ink views.
//
// Conventions the core must keep (also stated in the lead's report):
// - `attempt` numbers in events are 1-based, as shown to the user ("attempt 2/3").
// - a `usage` event carries the running figures of the current attempt only (not cumulative over attempts);
//   `phase_ok` / `phase_failed` / `run_finished` carry authoritative figures that replace the live ones.

import { createStore, type StoreApi } from 'zustand/vanilla';
import type { Activity, PhaseKind, PhasePlan, RunEvent } from '../src/events.js';

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
  /** Why the phase (or its last failed attempt) failed. */
  motif?: string;
  /** Which attempt the motif belongs to (undefined when it is the phase's final motif). */
  motifAttempt?: number;
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

function newPhase(name: string, kind: PhaseKind, attempts: number, model?: string): PhaseState {
  return {
    name,
    kind,
    ...(model ? { model } : {}),
    status: 'pending',
    attempt: 0,
    attempts,
    tokens: 0,
    cost: 0,
    settledTokens: 0,
    settledCost: 0,
    earlierSeconds: 0,
    sentBack: false,
    gates: [],
    activity: [],
  };
}

/** Add or replace (same gate name: a report repeated by a replay) one gate verdict. */
function withGate(gates: readonly GateReport[], report: GateReport): GateReport[] {
  const index = gates.findIndex((gate) => gate.gate === report.gate);
  if (index === -1) return [...gates, report];
  const next = gates.slice();
  next[index] = report;
  return next;
}

/** Totals are derived from the phases, never accumulated, so a phase_ok can not count twice. */
export function sumPhases(phases: readonly PhaseState[]): { tokens: number; cost: number } {
  let tokens = 0;
  let cost = 0;
  for (const phase of phases) {
    tokens += phase.tokens;
    cost += phase.cost;
  }
  return { tokens, cost };
}

function pushTail(activity: TailEntry[], entry: TailEntry): TailEntry[] {
  const next = activity.length >= TAIL_LIMIT ? activity.slice(activity.length - TAIL_LIMIT + 1) : activity.slice();
  next.push(entry);
  return next;
}

/** Apply `change` to the named phase (appending it when the plan did not list it), then re-derive totals. */
function updatePhase(
  state: RunState,
  name: string,
  kind: PhaseKind | undefined,
  change: (phase: PhaseState) => PhaseState,
): RunState {
  const index = state.phases.findIndex((phase) => phase.name === name);
  const phases = state.phases.slice();
  if (index === -1) {
    phases.push(change(newPhase(name, kind ?? 'agent', 1)));
  } else {
    phases[index] = change(phases[index]);
  }
  const finished = state.exit !== undefined;
  const totals = finished ? state.totals : { ...state.totals, ...sumPhases(phases) };
  return { ...state, phases, totals };
}

/** A phase added while the run goes (one more arm), placed before `before` (appended when absent); never twice. */
function withPlanned(phases: readonly PhaseState[], plan: PhasePlan, before?: string): PhaseState[] {
  if (phases.some((phase) => phase.name === plan.name)) return phases.slice();
  const at = before === undefined ? -1 : phases.findIndex((phase) => phase.name === before);
  const next = phases.slice();
  next.splice(at === -1 ? next.length : at, 0, newPhase(plan.name, plan.kind, plan.attempts, plan.model));
  return next;
}

function isLive(phase: PhaseState): boolean {
  return phase.status === 'running' || phase.status === 'retrying';
}

export function reduceRun(state: RunState, event: RunEvent): RunState {
  // A store shows one run: events of another run (a stale listener, a nested run) are not ours.
  if (event.type !== 'run_started' && state.adwId !== undefined && event.adwId !== state.adwId) return state;

  switch (event.type) {
    case 'run_started':
      return {
        ...initialRunState(),
        adwId: event.adwId,
        adwName: event.adwName,
        cwd: event.cwd,
        phases: event.phases.map((plan) => newPhase(plan.name, plan.kind, plan.attempts, plan.model)),
        totals: { tokens: 0, cost: 0, startedAt: event.ts },
      };

    case 'phase_started':
      return {
        ...updatePhase(state, event.phase, event.kind, (phase) => ({
          ...phase,
          kind: event.kind,
          status: 'running',
          attempt: Math.max(1, phase.attempt),
          startedAt: event.ts,
          // A phase that ran before runs again (its judge sent the build back, or it is the judge):
          // the clock continues from its earlier runs, and this run's gates start a fresh list.
          earlierSeconds: phase.seconds ?? phase.earlierSeconds ?? 0,
          seconds: undefined,
          finishedAt: undefined,
          sentBack: false,
          gates: [],
          // A code phase starts over with no attempt of its own to remember: its old verdict is done with.
          ...(event.kind === 'code' ? { motif: undefined, motifAttempt: undefined } : {}),
        })),
        currentPhase: event.phase,
      };

    case 'attempt_started':
      return {
        ...updatePhase(state, event.phase, undefined, (phase) => ({
          ...phase,
          status: 'running',
          attempt: event.attempt,
          attempts: event.attempts,
          startedAt: phase.startedAt ?? event.ts,
          // The new attempt has used nothing yet: the phase figures fall back to the settled ones.
          tokens: phase.settledTokens,
          cost: phase.settledCost,
          sessionId: event.sessionId ?? phase.sessionId,
          model: event.model ?? phase.model,
        })),
        currentPhase: event.phase,
      };

    case 'activity':
      return updatePhase(state, event.phase, undefined, (phase) => ({
        ...phase,
        activity: pushTail(phase.activity, { ts: event.ts, item: event.activity }),
      }));

    case 'usage':
      return updatePhase(state, event.phase, undefined, (phase) =>
        isLive(phase)
          ? { ...phase, tokens: phase.settledTokens + event.tokens, cost: phase.settledCost + event.cost }
          : phase,
      );

    case 'attempt_failed': {
      // A retry with no attempt of its own left is a judge sending an earlier phase back: this one waits,
      // its clock stopped, until it runs again. Otherwise a retry is this phase's next attempt.
      const sentBack = event.willRetry && event.attempt >= event.attempts;
      const next = (phase: PhaseState): Partial<PhaseState> => {
        if (sentBack) {
          const ran = phase.startedAt !== undefined ? Math.max(0, event.ts - phase.startedAt) / 1000 : 0;
          return { status: 'retrying', attempt: event.attempt, finishedAt: event.ts, seconds: (phase.earlierSeconds ?? 0) + ran };
        }
        return event.willRetry ? { status: 'retrying', attempt: event.attempt + 1 } : { attempt: event.attempt };
      };
      const item: TailItem = sentBack
        ? { kind: 'note', text: `sent back: ${event.motif}` }
        : { kind: 'attempt_failed', attempt: event.attempt, attempts: event.attempts, motif: event.motif, willRetry: event.willRetry };
      return updatePhase(state, event.phase, undefined, (phase) => ({
        ...phase,
        // The failed attempt's last usage becomes part of the phase for good.
        settledTokens: phase.tokens,
        settledCost: phase.cost,
        motif: event.motif,
        motifAttempt: event.attempt,
        attempts: event.attempts,
        sentBack,
        ...next(phase),
        activity: pushTail(phase.activity, { ts: event.ts, item }),
      }));
    }

    case 'phase_ok':
      return updatePhase(state, event.phase, event.kind, (phase) => ({
        ...phase,
        kind: event.kind,
        status: 'ok',
        attempt: event.attempt,
        attempts: event.attempts,
        finishedAt: event.ts,
        seconds: (phase.earlierSeconds ?? 0) + event.seconds,
        tokens: event.tokens,
        cost: event.cost,
        settledTokens: event.tokens,
        settledCost: event.cost,
        sessionId: event.sessionId ?? phase.sessionId,
      }));

    case 'phase_failed':
      return updatePhase(state, event.phase, event.kind, (phase) => ({
        ...phase,
        kind: event.kind,
        status: 'failed',
        attempt: Math.max(phase.attempt, 1),
        attempts: event.attempts,
        finishedAt: event.ts,
        seconds: (phase.earlierSeconds ?? 0) + event.seconds,
        tokens: event.tokens,
        cost: event.cost,
        settledTokens: event.tokens,
        settledCost: event.cost,
        sentBack: false,
        motif: event.motif,
        motifAttempt: undefined,
        sessionId: event.sessionId ?? phase.sessionId,
      }));

    case 'run_finished': {
      const phases = state.phases.map((phase): PhaseState => {
        if (phase.status === 'pending') return { ...phase, status: 'skipped' };
        // A judge still waiting for the phase it sent back: its last verdict stands (red), with its motif.
        if (phase.sentBack) return { ...phase, status: 'failed', sentBack: false, motifAttempt: undefined };
        // A phase still live when the run ends was cut short (Ctrl-C, crash of the core).
        if (isLive(phase)) {
          return {
            ...phase,
            status: 'failed',
            finishedAt: event.ts,
            motif: event.interrupted ? 'interrupted' : (phase.motif ?? 'run ended during this phase'),
            motifAttempt: undefined,
          };
        }
        return phase;
      });
      return {
        ...state,
        phases,
        exit: event.exit,
        failedPhase: event.failedPhase,
        interrupted: event.interrupted ?? false,
        totals: {
          ...state.totals,
          tokens: event.tokens,
          cost: event.cost,
          finishedAt: event.ts,
          seconds: event.seconds,
        },
        // "aborting…" and "press again" prompts are moot once the run is over.
        ui: { ...state.ui, abortRequested: false, quitArmed: false, statusLine: state.ui.quitting ? state.ui.statusLine : undefined },
      };
    }

    case 'phase_planned':
      return { ...state, phases: withPlanned(state.phases, event.phase, event.before) };

    case 'arm_patch':
    case 'harvest':
      return state; // best-of-N: folded by the bon slice beside this store (state/bonStore.ts)

    case 'gate_result':
      return updatePhase(state, event.phase, 'code', (phase) => ({
        ...phase,
        gates: withGate(phase.gates ?? [], {
          gate: event.gate,
          ok: event.ok,
          ...(event.motif !== undefined ? { motif: event.motif } : {}),
          seconds: event.seconds,
        }),
      }));

    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

export interface RunActions {
  /** Fold one core event into the state. */
  apply(event: RunEvent): void;
  /** Replace part of the UI-side state (used by the intent dispatcher in controller.ts). */
  setUi(patch: Partial<RunUiState>): void;
}

export type RunStoreState = RunState & RunActions;
export type RunStore = StoreApi<RunStoreState>;

export function createRunStore(initial: RunState = initialRunState()): RunStore {
  return createStore<RunStoreState>()((set) => ({
    ...initial,
    apply: (event) => set((state) => reduceRun(state, event)),
    setUi: (patch) => set((state) => ({ ui: { ...state.ui, ...patch } })),
  }));
}

/** The phase whose activity the tail shows: the one started last, else the first phase. */
export function currentPhaseOf(state: RunState): PhaseState | undefined {
  if (state.exit !== undefined) {
    // A finished run shows where it stopped, or the last phase that did something worth reading.
    const failed = state.phases.find((phase) => phase.name === state.failedPhase);
    const busy = [...state.phases].reverse().find((phase) => phase.activity.length > 0);
    if (failed ?? busy) return failed ?? busy;
  }
  return state.phases.find((phase) => phase.name === state.currentPhase) ?? state.phases[0];
}
