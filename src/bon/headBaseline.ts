// The gates once on HEAD (the baseline, run by ./treeArms.ts runBaseline in a worktree of its own): started beside
// the primer and, once the arms are out, going on beside them. Nothing waits for it but what needs it: an arm's
// gates are judged once it is known (a gate red on HEAD the same way is not the arm's), and the harvest.
import { InfrastructureError } from '../contract/errors.js';
import type { GateSignature } from '../gates/baseline.js';

export class HeadBaseline {
  /** What the payload's tests printed on HEAD so far, in tokens (the forecast's tool output of a test run). */
  testOutputTokens = 0;
  /** Gates red on HEAD, with what they said: the same failure is not the arms'. */
  readonly preexisting = new Map<string, GateSignature>();
  /** The line of a gate that cannot run on HEAD, once seen: nothing would verify an arm. */
  cannot?: string;
  /** Its own stop: the run given up before the fan-out, or closed (never a batch stop: the arms' gates need it). */
  readonly stop = new AbortController();
  private done?: Promise<void>;

  /** A resumed run whose first life recorded it: known, not run again. */
  known(): void {
    this.done ??= Promise.resolve();
  }

  /**
   * Starts it once (`runIt` resolves to the line of a gate that cannot run, and never rejects); a later call is the
   * same run. `onCannot` is told the line as soon as it is seen.
   */
  start(runIt: () => Promise<string | undefined>, onCannot?: (line: string) => void): Promise<void> {
    this.done ??= runIt().then((cannot) => {
      if (!cannot) return;
      this.cannot = cannot;
      onCannot?.(cannot);
    });
    return this.done;
  }

  /** Its signal: the run's interrupt or its own stop. */
  signal(run: AbortSignal): AbortSignal {
    return AbortSignal.any([run, this.stop.signal]);
  }

  /** Resolves once it ended (or was never started), whatever it said. */
  async settled(): Promise<void> {
    await this.done;
  }

  /** Resolves once it is known; throws the line of a gate that cannot run on HEAD. */
  async ready(): Promise<void> {
    await this.done;
    if (this.cannot) throw new InfrastructureError(this.cannot);
  }
}
