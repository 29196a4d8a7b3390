// What the run views derive from the run state, as pure functions: which phase is live, the totals, the phase
// the tail shows, the clocks. The reducer and the bon slice use the same ones, so screen and fold agree.

import type { PhaseState, RunState, RunTotals } from './state.js';

/** A phase whose attempt is going (or about to go again). */
export function isLive(phase: PhaseState | undefined): boolean {
  return phase !== undefined && (phase.status === 'running' || phase.status === 'retrying');
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

/** Seconds to show for a phase: measured when finished, ticking from startedAt (after its earlier runs) while live. */
export function phaseSeconds(phase: PhaseState, now: number): number | undefined {
  if (phase.seconds !== undefined) return phase.seconds;
  if (phase.startedAt === undefined) return undefined;
  const end = phase.finishedAt ?? now;
  return (phase.earlierSeconds ?? 0) + Math.max(0, (end - phase.startedAt) / 1000);
}

/** The run's wall time: measured once finished, ticking from its start while it goes. */
export function elapsedSeconds(totals: RunTotals, now: number): number {
  if (totals.seconds !== undefined) return totals.seconds;
  if (totals.startedAt === undefined) return 0;
  return Math.max(0, ((totals.finishedAt ?? now) - totals.startedAt) / 1000);
}
