// Resume after a crash or an interrupt: from a run's recorded events and the ledger (written before every pi
// start, so it survives a SIGKILL of the cockpit), find the phase to continue, its live session, and what the
// phases before it handed on. Pure: the caller reads the files and rebuilds the ADW's phases from `args`.
import type { RunEvent } from '../contract/events.js';
import type { LedgerEntry } from '../trace/ledger.js';

export type { CarriedResult as CarriedPhase } from './resumeOptions.js';
import type { CarriedResult as CarriedPhase } from './resumeOptions.js';
import type { PhasePlan } from '../contract/events.js';
import { EXIT } from '../contract/exit.js';

export interface ResumePlan {
  adwId: string;
  adwName: string;
  cwd: string;
  args: Record<string, unknown>;
  /** Phases already green: not run again, their results handed on. */
  carried: Map<string, CarriedPhase>;
  /** The phase to continue. */
  phase: string;
  /** Its live session, when it had one (agent phases). */
  sessionId?: string;
  /** Attempts it spent before the stop (for the record: a resumed phase gets a fresh budget). */
  used: number;
  /** Tokens and cost spent by the unfinished phase's attempts before the stop (already billed). */
  spent: { tokens: number; cost: number };
  /** Phases planned while the run ran (best-of-N arms added from the board), in order. */
  planned: PhasePlan[];
}

export type ResumeDecision = { ok: true; plan: ResumePlan } | { ok: false; motif: string };

export function planResume(adwId: string, events: RunEvent[], ledger: LedgerEntry[]): ResumeDecision {
  const starts = events.map((e, i) => (e.type === 'run_started' ? i : -1)).filter((i) => i >= 0);
  const first = events[starts[0] ?? -1];
  if (!first || first.type !== 'run_started') return { ok: false, motif: `no recorded start for run ${adwId}` };
  if (!first.args) return { ok: false, motif: `run ${adwId} recorded no inputs: it cannot be rebuilt` };
  // The latest life of the run: its start or its end (outcome events such as the envelope or an apply come after
  // the end and say nothing of it).
  const last = events.findLast((e) => e.type === 'run_started' || e.type === 'run_finished');
  if (last?.type === 'run_finished' && last.exit === EXIT.green)
    return { ok: false, motif: `run ${adwId} is green: nothing to resume` };
  const carried = new Map<string, CarriedPhase>();
  // Best-of-N arms: an arm that ended red is finished too (its verdict stands), unlike a red phase of a workflow.
  const arms = new Set(first.phases.filter((p) => p.arm !== undefined).map((p) => p.name));
  const planned: PhasePlan[] = [];
  const sessions = new Map<string, string>();
  const used = new Map<string, number>();
  const spent = new Map<string, { tokens: number; cost: number }>();
  // Live figures of the attempt in flight when the cockpit died (no phase_failed was written then).
  const live = new Map<string, { tokens: number; cost: number }>();
  const settle = (phase: string) => {
    const figures = live.get(phase);
    if (!figures) return;
    const sum = spent.get(phase) ?? { tokens: 0, cost: 0 };
    spent.set(phase, { tokens: sum.tokens + figures.tokens, cost: sum.cost + figures.cost });
    live.delete(phase);
  };
  for (const e of events) {
    if (e.type === 'usage') {
      live.set(e.phase, { tokens: e.tokens, cost: e.cost });
    } else if (e.type === 'attempt_failed') {
      settle(e.phase);
    } else if (e.type === 'attempt_started') {
      settle(e.phase);
      if (e.sessionId) sessions.set(e.phase, e.sessionId);
      used.set(e.phase, Math.max(used.get(e.phase) ?? 0, e.attempt));
    } else if (e.type === 'phase_ok') {
      carried.set(e.phase, {
        seconds: e.seconds,
        tokens: e.tokens,
        cost: e.cost,
        attempt: e.attempt,
        attempts: e.attempts,
        sessionId: e.sessionId,
        result: e.result,
      });
    } else if (e.type === 'phase_planned') {
      planned.push(e.phase);
      if (e.phase.arm !== undefined) arms.add(e.phase.name);
    } else if (e.type === 'phase_failed') {
      carried.delete(e.phase);
      if (arms.has(e.phase) && e.failure !== 'interrupted' && !e.motif.startsWith('interrupted')) {
        carried.set(e.phase, {
          status: 'failed',
          motif: e.motif,
          failure: e.failure,
          seconds: e.seconds,
          tokens: e.tokens,
          cost: e.cost,
          attempt: e.attempts,
          attempts: e.attempts,
          sessionId: e.sessionId,
          result: undefined,
        });
      }
      live.delete(e.phase);
      spent.set(e.phase, { tokens: e.tokens, cost: e.cost });
    } else if (e.type === 'phase_started') {
      // A phase run again (sent back by its judge) is no longer green until it says so.
      carried.delete(e.phase);
    }
  }
  // The ledger is the crash-safe record of sessions: it wins over events that may not have reached the disk.
  for (const line of ledger) if (line.adw_id === adwId && line.phase) sessions.set(line.phase, line.session_id);
  for (const name of [...live.keys()]) settle(name);
  const phase = first.phases.find((p) => !carried.has(p.name));
  if (!phase) return { ok: false, motif: `run ${adwId}: every phase is green already` };
  const attemptsUsed = used.get(phase.name) ?? 0;
  return {
    ok: true,
    plan: {
      adwId,
      adwName: first.adwName,
      cwd: first.cwd,
      args: first.args,
      carried: new Map(
        [...carried].filter(
          ([name]) => first.phases.some((p) => p.name === name) || planned.some((p) => p.name === name),
        ),
      ),
      phase: phase.name,
      sessionId: sessions.get(phase.name),
      used: attemptsUsed,
      spent: spent.get(phase.name) ?? { tokens: 0, cost: 0 },
      planned,
    },
  };
}

/** The first ask of a resumed phase whose session already holds the mission. */
export const CONTINUE_ASK =
  'The factory stopped while you were working on this mission (a crash or an interrupt). Continue the same mission from where it stopped; do not start over.';

/**
 * The apply a green best-of-N run asked for (`--apply`) and never recorded: killed between its harvest and its apply.
 * It is part of the run, so `factory resume` does it. Pure.
 */
export function pendingApply(events: readonly RunEvent[]): { yes: boolean } | undefined {
  const start = events.find((e) => e.type === 'run_started');
  const args = (start?.type === 'run_started' ? start.args : undefined) as
    | { apply?: unknown; yes?: unknown }
    | undefined;
  if (start?.type !== 'run_started' || start.adwName !== 'adw_bon' || args?.apply !== true) return undefined;
  const end = events.findLastIndex((e) => e.type === 'run_started' || e.type === 'run_finished');
  const last = events[end];
  if (last?.type !== 'run_finished' || last.exit !== EXIT.green) return undefined;
  const harvest = events.findLast((e) => e.type === 'harvest');
  if (harvest?.type !== 'harvest' || harvest.winner === undefined) return undefined;
  if (events.slice(end).some((e) => e.type === 'apply')) return undefined;
  return { yes: args.yes === true };
}
