// The run reducer: one core event (src/contract/events.ts) folded into the run state. Pure, so the headless printer,
// the replay of a stored run and the tests all use the exact same folding; ./store.ts wraps it in a store.

import type { PhaseKind, PhasePlan, RunEvent } from '../../src/contract/events.js';
import { waitingLine } from '../../src/contract/format.js';
import { isLive, sumPhases } from './selectors.js';
import {
  initialRunState,
  TAIL_LIMIT,
  type GateReport,
  type PhaseState,
  type RunState,
  type TailEntry,
  type TailItem,
} from './state.js';

function newPhase(name: string, kind: PhaseKind, attempts: number, model?: string, arm?: number): PhaseState {
  return {
    name,
    kind,
    ...(model ? { model } : {}),
    ...(arm !== undefined ? { arm } : {}),
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
  next.splice(at === -1 ? next.length : at, 0, newPhase(plan.name, plan.kind, plan.attempts, plan.model, plan.arm));
  return next;
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
        phases: event.phases.map((plan) => newPhase(plan.name, plan.kind, plan.attempts, plan.model, plan.arm)),
        totals: { tokens: 0, cost: 0, startedAt: event.ts },
      };

    case 'phase_waiting':
      return updatePhase(state, event.phase, undefined, (phase) => ({ ...phase, waiting: waitingLine(event) }));

    case 'phase_started':
      return {
        ...updatePhase(state, event.phase, event.kind, (phase) => ({
          ...phase,
          waiting: undefined,
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
          ...(event.kind === 'code' ? { motif: undefined, motifAttempt: undefined, failure: undefined } : {}),
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
          return {
            status: 'retrying',
            attempt: event.attempt,
            finishedAt: event.ts,
            seconds: (phase.earlierSeconds ?? 0) + ran,
          };
        }
        return event.willRetry ? { status: 'retrying', attempt: event.attempt + 1 } : { attempt: event.attempt };
      };
      const item: TailItem = sentBack
        ? { kind: 'note', text: `sent back: ${event.motif}` }
        : {
            kind: 'attempt_failed',
            attempt: event.attempt,
            attempts: event.attempts,
            motif: event.motif,
            willRetry: event.willRetry,
          };
      return updatePhase(state, event.phase, undefined, (phase) => ({
        ...phase,
        // The failed attempt's last usage becomes part of the phase for good.
        settledTokens: phase.tokens,
        settledCost: phase.cost,
        motif: event.motif,
        motifAttempt: event.attempt,
        failure: event.failure,
        attempts: event.attempts,
        sentBack,
        ...next(phase),
        activity: pushTail(phase.activity, { ts: event.ts, item }),
      }));
    }

    case 'phase_ok':
      return updatePhase(state, event.phase, event.kind, ({ unverified: _earlier, ...phase }) => ({
        ...phase,
        kind: event.kind,
        status: 'ok',
        // The core's settled verdict of a best-of-N arm (its ArmRank): ended, but nothing verified it.
        ...((event.result as { unverified?: unknown } | undefined)?.unverified === true ? { unverified: true } : {}),
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
        failure: event.failure ?? phase.failure,
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
            failure: event.interrupted ? 'interrupted' : phase.failure,
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
        ui: {
          ...state.ui,
          abortRequested: false,
          quitArmed: false,
          statusLine: state.ui.quitting ? state.ui.statusLine : undefined,
        },
      };
    }

    case 'phase_planned':
      return { ...state, phases: withPlanned(state.phases, event.phase, event.before) };

    case 'arm_patch':
    case 'harvest':
    case 'spend':
    case 'race_stop':
    case 'clone_refused':
    case 'forecast':
    case 'baseline':
      return state; // best-of-N: folded by the bon slice beside this store (state/bon/store.ts)

    case 'fallback':
      // The relaunch runs on the fallback: the phase shows the model that finishes (the note says why).
      return updatePhase(state, event.phase, undefined, (phase) => ({ ...phase, model: event.to }));

    case 'envelope': // the run's result: printed once the screen is gone
    case 'proposal':
    case 'apply': // the board's status line says it as the apply ends
      return state;

    case 'gate_result':
      return updatePhase(state, event.phase, 'code', (phase) => ({
        ...phase,
        gates: withGate(phase.gates ?? [], {
          gate: event.gate,
          ok: event.ok,
          ...(event.motif !== undefined ? { motif: event.motif } : {}),
          seconds: event.seconds,
          ...(event.preexisting ? { preexisting: true } : {}),
        }),
      }));

    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
