// A run of an ADW as the runner (./runner.ts) drives it: its phases' shape, the figures each is charged, its events and
// their one redactor, its abort. The runner decides what happens; this is what it happens to.
import { randomBytes } from 'node:crypto';
import type { PhaseKind, RunEvent, RunEventListener } from '../contract/events.js';
import { addCosts, addCounts } from '../contract/numbers.js';
import { RunEvents } from './runEvents.js';

export interface AttemptContext {
  /** 0-based attempt number. */
  attempt: number;
  attempts: number;
  /** Why the previous attempt of this phase failed (drives the correction ask). */
  lastMotif?: string;
  /** Set on the first attempt of a resumed phase whose live session already holds its mission. */
  continuation?: string;
  signal: AbortSignal;
}

export interface Phase {
  name: string;
  kind: PhaseKind;
  /** Extra attempts for agent phases, in the same live session. Ignored for code phases. */
  retries?: number;
  /**
   * A code phase that judges an earlier agent phase (e.g. gates judging a build): when it fails for a reason
   * (PhaseFailure), the judged phase gets its next attempt in its live session with this phase's motif, then
   * the phases after it run again. When the judged phase has no attempt left, this phase fails the run.
   */
  judges?: string;
  /**
   * The run goes on when this phase fails (PhaseFailure or a crash of its action): a best-of-N arm that goes red
   * must not stop the batch. An InfrastructureError or an interrupt still stops the run.
   */
  optional?: boolean;
  /** The model the phase is planned on, shown before it starts (a best-of-N arm). */
  model?: string;
  /** A best-of-N arm's number (its name is for people; nothing parses it back). */
  arm?: number;
  /**
   * Consecutive phases of one group run at once, at most `limit` at a time; phases planned into the group while it
   * runs (an arm added live) join it. A group member must be `optional`: one going red leaves the others running.
   */
  parallel?: { group: string; limit: number; why?: string };
  action: (run: Run, ctx: AttemptContext) => unknown | Promise<unknown>;
}

export function newAdwId(): string {
  return randomBytes(4).toString('hex');
}

interface PhaseFigures {
  tokens: number;
  cost: number;
  /** The phase's own time when its action measures it (a best-of-N arm: its rank's seconds), else the runner's clock. */
  seconds?: number;
}

export class Run extends RunEvents {
  readonly results: Record<string, unknown> = {};
  /** Phases of a group that waited for a slot before they started (best-of-N arms beyond the concurrency). */
  readonly waited = new Set<string>();
  /** phase name → live session id: a retry continues it. */
  readonly sessions: Record<string, string> = {};
  tokens = 0;
  cost = 0;
  private readonly listeners = new Set<RunEventListener>();
  private readonly figures = new Map<string, PhaseFigures>();
  private readonly aborter = new AbortController();

  /** Set when a spend cap stopped the run (a best-of-N run cap…): the run then exits 3, its motif on run_finished. */
  budget: string | undefined;

  /** The command's inputs, recorded in run_started so that a resume can rebuild the phases. */
  args: Record<string, unknown> | undefined;

  constructor(
    readonly adwName: string,
    readonly cwd: string,
    readonly adwId: string = newAdwId(),
  ) {
    super();
  }

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

  /**
   * Masks secret values in anything of this run that is shown or written: a string, or a copy of a JSON-like value
   * with its strings masked. commands/prepared.ts sets it from the workspace's redactor; whoever writes an
   * artefact of the run (the trace's close, a workflow's own file) goes through it, so there is one redactor.
   */
  redact: <T>(value: T) => T = (value) => value;

  /** Applied to every event before any listener sees it: by default the run's redactor. */
  filter: (event: RunEvent) => RunEvent = (event) => this.redact(event);

  emit(event: RunEvent): void {
    const shown = this.filter(event);
    for (const listener of this.listeners) listener(shown);
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
    // Clamped sums: the figures come from an agent's stream, and one bad value must not poison the run's total.
    const f = this.phaseFigures(phase);
    f.tokens = addCounts(f.tokens, tokens);
    f.cost = addCosts(f.cost, cost);
    this.tokens = addCounts(this.tokens, tokens);
    this.cost = addCosts(this.cost, cost);
  }

  /**
   * The phase's time as its action measured it: one source for every table that shows it (the phase table and the
   * arms ranking of the same run must not differ by the action's overhead).
   */
  timePhase(phase: string, seconds: number): void {
    this.phaseFigures(phase).seconds = seconds;
  }

  figuresOf(phase: string): PhaseFigures {
    return { ...this.phaseFigures(phase) };
  }
}
