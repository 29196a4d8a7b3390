// The runner: executes an ADW's phases in order, measures them, retries agent phases in the same live
// session, and stops at the first phase that fails for good. It knows nothing about pi or the screen: it
// emits typed events and returns an exit code.
import { randomBytes } from 'node:crypto';
import { errorMessage, InfrastructureError, oneLine } from './errors.js';
import type { Activity, PhaseKind, RunEvent, RunEventListener } from './events.js';

/** A reasoned failure of one attempt: the runner decides whether to retry. */
export class PhaseFailure extends Error {
  override readonly name = 'PhaseFailure';
}

export interface AttemptContext {
  /** 0-based attempt number. */
  attempt: number;
  attempts: number;
  /** Why the previous attempt of this phase failed (drives the correction ask). */
  lastMotif?: string;
  signal: AbortSignal;
}

export interface Phase {
  name: string;
  kind: PhaseKind;
  /** Extra attempts for agent phases, in the same live session. Ignored for code phases. */
  retries?: number;
  action: (run: Run, ctx: AttemptContext) => unknown | Promise<unknown>;
}

export function newAdwId(): string {
  return randomBytes(4).toString('hex');
}

interface PhaseFigures {
  tokens: number;
  cost: number;
}

export class Run {
  readonly results: Record<string, unknown> = {};
  /** phase name → live session id: a retry continues it. */
  readonly sessions: Record<string, string> = {};
  tokens = 0;
  cost = 0;
  private readonly listeners = new Set<RunEventListener>();
  private readonly figures = new Map<string, PhaseFigures>();
  private readonly aborter = new AbortController();

  constructor(
    readonly adwName: string,
    readonly cwd: string,
    readonly adwId: string = newAdwId(),
  ) {}

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  get interrupted(): boolean {
    return this.aborter.signal.aborted;
  }

  /** Interrupt the running attempt; the run then stops (exit 130). */
  abort(): void {
    this.aborter.abort();
  }

  subscribe(listener: RunEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: RunEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private phaseFigures(phase: string): PhaseFigures {
    let f = this.figures.get(phase);
    if (!f) {
      f = { tokens: 0, cost: 0 };
      this.figures.set(phase, f);
    }
    return f;
  }

  /** Book the final figures of one attempt (successful or not) to its phase and to the run. */
  charge(phase: string, tokens: number, cost: number): void {
    const f = this.phaseFigures(phase);
    f.tokens += tokens;
    f.cost += cost;
    this.tokens += tokens;
    this.cost += cost;
  }

  /** Live figures of the attempt in flight (not yet charged); consumers add them to the phase's settled figures. */
  liveUsage(phase: string, tokens: number, cost: number): void {
    this.emit({ type: 'usage', adwId: this.adwId, ts: Date.now(), phase, tokens, cost });
  }

  activity(phase: string, activity: Activity): void {
    this.emit({ type: 'activity', adwId: this.adwId, ts: Date.now(), phase, activity });
  }

  attemptStarted(phase: string, attempt: number, attempts: number, extra: { sessionId?: string; model?: string } = {}): void {
    this.emit({ type: 'attempt_started', adwId: this.adwId, ts: Date.now(), phase, attempt, attempts, ...extra });
  }

  figuresOf(phase: string): PhaseFigures {
    return { ...this.phaseFigures(phase) };
  }
}

function attemptsOf(phase: Phase): number {
  return phase.kind === 'agent' ? 1 + Math.max(0, phase.retries ?? 0) : 1;
}

/** Run the phases; returns the exit code (0 green, 1 a phase failed for good, 130 interrupted). */
export async function execute(run: Run, phases: Phase[]): Promise<number> {
  const started = performance.now();
  const finish = (exit: number, failedPhase?: string): number => {
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
    });
    return exit;
  };
  const plan = phases.map((p) => ({ name: p.name, kind: p.kind, attempts: attemptsOf(p) }));
  run.emit({ type: 'run_started', adwId: run.adwId, ts: Date.now(), adwName: run.adwName, phases: plan, cwd: run.cwd });
  if (phases.length === 0) {
    run.emit({ type: 'phase_failed', adwId: run.adwId, ts: Date.now(), phase: '(none)', kind: 'code', attempts: 0, motif: 'no phases declared: an empty ADW is not an ADW', seconds: 0, tokens: 0, cost: 0 });
    return finish(1, '(none)');
  }
  const unknown = phases.find((p) => p.kind !== 'agent' && p.kind !== 'code');
  if (unknown) {
    run.emit({ type: 'phase_failed', adwId: run.adwId, ts: Date.now(), phase: unknown.name, kind: 'code', attempts: 0, motif: `unknown phase kind ${JSON.stringify(unknown.kind)}`, seconds: 0, tokens: 0, cost: 0 });
    return finish(1, unknown.name);
  }
  for (const phase of phases) {
    const outcome = await runPhase(run, phase);
    if (outcome !== 'ok') return finish(run.interrupted ? 130 : outcome === 'infrastructure' ? 2 : 1, phase.name);
  }
  return finish(0);
}

async function runPhase(run: Run, phase: Phase): Promise<'ok' | 'failed' | 'infrastructure'> {
  const attempts = attemptsOf(phase);
  const clock = performance.now();
  let lastMotif: string | undefined;
  let infrastructure = false;
  run.emit({ type: 'phase_started', adwId: run.adwId, ts: Date.now(), phase: phase.name, kind: phase.kind });
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (phase.kind === 'code') run.attemptStarted(phase.name, attempt + 1, attempts);
    let retryable = true;
    try {
      if (run.interrupted) throw new PhaseFailure('interrupted by the user');
      const result = await phase.action(run, { attempt, attempts, lastMotif, signal: run.signal });
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
        seconds: (performance.now() - clock) / 1000,
        tokens: f.tokens,
        cost: f.cost,
        sessionId: run.sessions[phase.name],
      });
      return 'ok';
    } catch (error) {
      // A PhaseFailure is a reasoned, retryable failure; anything else fails the phase at once, reported
      // with its message (never a crash of the cockpit).
      retryable = error instanceof PhaseFailure;
      infrastructure = error instanceof InfrastructureError;
      lastMotif = oneLine(errorMessage(error)) || (error instanceof Error ? error.name : 'failed');
    }
    const willRetry = retryable && !run.interrupted && attempt + 1 < attempts;
    run.emit({ type: 'attempt_failed', adwId: run.adwId, ts: Date.now(), phase: phase.name, attempt: attempt + 1, attempts, motif: lastMotif, willRetry });
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
    motif: run.interrupted ? 'interrupted by the user' : lastMotif ?? 'failed',
    seconds: (performance.now() - clock) / 1000,
    tokens: f.tokens,
    cost: f.cost,
    sessionId: run.sessions[phase.name],
  });
  return infrastructure ? 'infrastructure' : 'failed';
}
