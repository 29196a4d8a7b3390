// The runner: executes an ADW's phases in order, measures them, retries agent phases in the same live
// session, and stops at the first phase that fails for good. It knows nothing about pi or the screen: it
// emits typed events and returns an exit code.
import {
  errorMessage,
  HarnessError,
  InfrastructureError,
  isRetryable,
  firstLine,
  PhaseFailure,
  type FailureKind,
} from '../contract/errors.js';
import type { PhaseKind, PhasePlan } from '../contract/events.js';
import { runGroup } from './phaseGroup.js';
import { Run, type Phase } from './run.js';
import type { CarriedResult, ResumeOptions } from './resumeOptions.js';
import { EXIT } from '../contract/exit.js';

export type { CarriedResult, ResumeOptions } from './resumeOptions.js';
export { newAdwId, Run, type AttemptContext, type Phase } from './run.js';

/** The typed reason of whatever an attempt threw. */
export function failureKindOf(error: unknown): FailureKind {
  if (error instanceof PhaseFailure || error instanceof InfrastructureError) return error.kind;
  if (error instanceof HarnessError) return error.evidence.kind ?? 'error';
  return 'error';
}

/** What the events say of a phase before it runs. */
export function planOf(p: Phase): PhasePlan {
  return {
    name: p.name,
    kind: p.kind,
    attempts: attemptsOf(p),
    ...(p.model ? { model: p.model } : {}),
    ...(p.arm !== undefined ? { arm: p.arm } : {}),
  };
}

function attemptsOf(phase: Phase): number {
  return phase.kind === 'agent' ? 1 + Math.max(0, phase.retries ?? 0) : 1;
}

/** The exit code of a run a spend cap stopped. */
export const EXIT_BUDGET = EXIT.budget;

/** Run the phases; returns the exit code (../contract/exit.ts: green, a phase failed for good, a budget stopped it, interrupted). */
export async function execute(run: Run, phases: Phase[], resume?: ResumeOptions): Promise<number> {
  const started = performance.now();
  const finish = (code: number, failedPhase?: string): number => {
    // A budget that stopped the run outranks green or red (CI must tell "out of money" from "broken"), never an
    // interrupt or the installation's failure.
    const exit = run.budget !== undefined && (code === EXIT.green || code === EXIT.failed) ? EXIT_BUDGET : code;
    run.emit({
      type: 'run_finished',
      adwId: run.adwId,
      ts: Date.now(),
      exit,
      seconds: (performance.now() - started) / 1000,
      tokens: run.tokens,
      cost: run.cost,
      failedPhase,
      interrupted: run.interrupted || undefined,
      ...(exit === EXIT_BUDGET ? { budget: run.budget } : {}),
    });
    return exit;
  };
  const plan = phases.map(planOf);
  run.emit({
    type: 'run_started',
    adwId: run.adwId,
    ts: Date.now(),
    adwName: run.adwName,
    phases: plan,
    cwd: run.cwd,
    args: run.args,
  });
  // A plan that cannot run is refused before any phase starts, as the failure of the phase at fault.
  const refuse = (phase: string, kind: PhaseKind, motif: string): number => {
    run.emit({
      type: 'phase_failed',
      adwId: run.adwId,
      ts: Date.now(),
      phase,
      kind,
      attempts: 0,
      motif,
      seconds: 0,
      tokens: 0,
      cost: 0,
    });
    return finish(EXIT.failed, phase);
  };
  if (phases.length === 0) return refuse('(none)', 'code', 'no phases declared: an empty ADW is not an ADW');
  const unknown = phases.find((p) => p.kind !== 'agent' && p.kind !== 'code');
  if (unknown) return refuse(unknown.name, 'code', `unknown phase kind ${JSON.stringify(unknown.kind)}`);
  const misplaced = phases.find(
    (p, i) => p.judges !== undefined && !phases.slice(0, i).some((q) => q.name === p.judges && q.kind === 'agent'),
  );
  if (misplaced)
    return refuse(
      misplaced.name,
      misplaced.kind,
      `judges ${JSON.stringify(misplaced.judges)}, which is not an earlier agent phase`,
    );
  const progress = new Map<string, PhaseProgress>();
  let i = 0;
  while (i < phases.length) {
    const phase = phases[i]!;
    let state = progress.get(phase.name);
    if (!state) {
      state = { used: 0 };
      progress.set(phase.name, state);
    }
    const carried = resume?.carried.get(phase.name);
    if (
      carried &&
      !state.continuation &&
      state.used === 0 &&
      (resume!.anywhere || i < phases.findIndex((p) => p.name === resume!.phase))
    ) {
      state.used = carried.attempt;
      replayCarried(run, phase, carried);
      i += 1;
      continue;
    }
    if (resume && phase.name === resume.phase && state.used === 0) state.continuation = resume.continuation;
    if (phase.parallel) {
      // One subscription for the group: each wait gets the next phase_planned (a member added live starts at once).
      let ring: (() => void) | undefined;
      const off = run.subscribe((e) => e.type === 'phase_planned' && ring?.());
      const group = await runGroup(
        run,
        phases,
        i,
        (member) => {
          const memberState = progress.get(member.name) ?? { used: 0 };
          progress.set(member.name, memberState);
          const done = resume?.anywhere ? resume.carried.get(member.name) : undefined;
          if (done) {
            replayCarried(run, member, done);
            return Promise.resolve({ status: done.status === 'failed' ? ('failed' as const) : ('ok' as const) });
          }
          return runPhase(run, member, memberState, false);
        },
        () => new Promise<void>((resolve) => (ring = resolve)),
        (member) => {
          // Its time will not include the wait, nor be compared with those who ran meanwhile (../bon/harvest/rank.ts).
          run.waited.add(member.name);
          const { limit, why } = member.parallel!;
          run.emit({
            type: 'phase_waiting',
            adwId: run.adwId,
            ts: Date.now(),
            phase: member.name,
            limit,
            ...(why ? { why } : {}),
          });
        },
      ).finally(off);
      if (group.stop)
        return finish(
          run.interrupted ? EXIT.interrupted : group.stop === 'infrastructure' ? EXIT.infrastructure : EXIT.failed,
          group.failedPhase,
        );
      i = group.next;
      continue;
    }
    const outcome = await runPhase(run, phase, state, canSendBack(phase, phases, progress));
    if (outcome.status === 'ok') {
      i += 1;
      continue;
    }
    const judged = phase.judges ? progress.get(phase.judges) : undefined;
    const judgedPhase = phases.findIndex((p) => p.name === phase.judges);
    if (outcome.status === 'sent-back' && judged && judgedPhase >= 0) {
      judged.nextMotif = outcome.motif;
      i = judgedPhase;
      continue;
    }
    if (phase.optional && outcome.status === 'failed' && !run.interrupted) {
      i += 1;
      continue;
    }
    return finish(
      run.interrupted ? EXIT.interrupted : outcome.status === 'infrastructure' ? EXIT.infrastructure : EXIT.failed,
      phase.name,
    );
  }
  return finish(EXIT.green);
}

/** A phase green in an earlier life of the run: its figures and result are booked again, it is not re-run. */
function replayCarried(run: Run, phase: Phase, carried: CarriedResult): void {
  if (carried.sessionId) run.sessions[phase.name] = carried.sessionId;
  run.charge(phase.name, carried.tokens, carried.cost);
  run.emit({ type: 'phase_started', adwId: run.adwId, ts: Date.now(), phase: phase.name, kind: phase.kind });
  if (carried.status === 'failed') {
    const { seconds, tokens, cost, sessionId, attempts } = carried;
    run.emit({
      type: 'phase_failed',
      adwId: run.adwId,
      ts: Date.now(),
      phase: phase.name,
      kind: phase.kind,
      attempts,
      motif: carried.motif ?? 'failed',
      failure: carried.failure,
      seconds,
      tokens,
      cost,
      sessionId,
    });
    return;
  }
  run.results[phase.name] = carried.result;
  run.emit({
    type: 'phase_ok',
    adwId: run.adwId,
    ts: Date.now(),
    phase: phase.name,
    kind: phase.kind,
    attempt: carried.attempt,
    attempts: carried.attempts,
    seconds: carried.seconds,
    tokens: carried.tokens,
    cost: carried.cost,
    sessionId: carried.sessionId,
    result: carried.result,
  });
}

interface PhaseProgress {
  /** Attempts already spent on this phase across the run (a judge may send it back for more). */
  used: number;
  /** First ask of a resumed phase whose session already holds its mission. */
  continuation?: string;
  /** The motif of a judge that sent this phase back: drives its next attempt's correction. */
  nextMotif?: string;
}

export type PhaseOutcome =
  | { status: 'ok' }
  | { status: 'failed' | 'infrastructure' }
  | { status: 'sent-back'; motif: string };

/** Whether the agent phase judged by `phase` still has an attempt to spend. */
function canSendBack(phase: Phase, phases: Phase[], progress: Map<string, PhaseProgress>): boolean {
  if (!phase.judges) return false;
  const judged = phases.find((p) => p.name === phase.judges);
  const state = progress.get(phase.judges);
  return judged !== undefined && state !== undefined && state.used < attemptsOf(judged);
}

async function runPhase(run: Run, phase: Phase, progress: PhaseProgress, sendBack: boolean): Promise<PhaseOutcome> {
  const attempts = attemptsOf(phase);
  const clock = performance.now();
  // A phase sent back by its judge starts with the judge's motif, on its next unspent attempt.
  let lastMotif = progress.nextMotif;
  progress.nextMotif = undefined;
  const continuation = progress.continuation;
  progress.continuation = undefined;
  let infrastructure = false;
  let retryable = true;
  let failure: FailureKind | undefined;
  let shown: string | undefined;
  const first = phase.kind === 'agent' ? progress.used : 0;
  run.emit({ type: 'phase_started', adwId: run.adwId, ts: Date.now(), phase: phase.name, kind: phase.kind });
  for (let attempt = first; attempt < attempts; attempt += 1) {
    if (phase.kind === 'agent') progress.used = attempt + 1;
    if (phase.kind === 'code') run.attemptStarted(phase.name, attempt + 1, attempts);
    try {
      if (run.interrupted) throw new PhaseFailure('interrupted by the user', undefined, 'interrupted');
      const result = await phase.action(run, {
        attempt,
        attempts,
        lastMotif,
        signal: run.signal,
        continuation: attempt === first ? continuation : undefined,
      });
      run.results[phase.name] = result;
      const f = run.figuresOf(phase.name);
      run.emit({
        type: 'phase_ok',
        adwId: run.adwId,
        ts: Date.now(),
        phase: phase.name,
        kind: phase.kind,
        attempt: attempt + 1,
        attempts,
        seconds: f.seconds ?? (performance.now() - clock) / 1000,
        tokens: f.tokens,
        cost: f.cost,
        sessionId: run.sessions[phase.name],
        result,
      });
      return { status: 'ok' };
    } catch (error) {
      // A PhaseFailure is a reasoned, retryable failure; anything else fails the phase at once, reported
      // with its message (never a crash of the cockpit).
      failure = failureKindOf(error);
      retryable = error instanceof PhaseFailure && isRetryable(failure);
      // A refused check (dirty tree, missing spec) is bad input, like a bad flag: exit 2, not a failed workflow.
      infrastructure = error instanceof InfrastructureError || (error instanceof PhaseFailure && failure === 'check');
      shown = firstLine(errorMessage(error)) || (error instanceof Error ? error.name : 'failed');
      lastMotif = (error instanceof PhaseFailure && error.detail) || shown;
    }
    const sentBack = retryable && sendBack && !run.interrupted;
    const willRetry = sentBack || (retryable && !run.interrupted && attempt + 1 < attempts);
    run.emit({
      type: 'attempt_failed',
      adwId: run.adwId,
      ts: Date.now(),
      phase: phase.name,
      attempt: attempt + 1,
      attempts,
      motif: shown,
      failure,
      willRetry,
    });
    if (sentBack) return { status: 'sent-back', motif: lastMotif };
    if (!willRetry) break;
  }
  const f = run.figuresOf(phase.name);
  run.emit({
    type: 'phase_failed',
    adwId: run.adwId,
    ts: Date.now(),
    phase: phase.name,
    kind: phase.kind,
    attempts,
    motif: run.interrupted ? 'interrupted by the user' : (shown ?? 'failed'),
    failure: run.interrupted ? 'interrupted' : failure,
    seconds: f.seconds ?? (performance.now() - clock) / 1000,
    tokens: f.tokens,
    cost: f.cost,
    sessionId: run.sessions[phase.name],
  });
  return { status: infrastructure ? 'infrastructure' : 'failed' };
}
