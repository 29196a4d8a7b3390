// What a part of a run may tell the run, built on one `emit`: the Run itself, and whatever works for it away from
// it (a best-of-N arm behind its dispatcher, ../bon/dispatch/) whose events reach the run only through that port.
import type { Activity, RunEvent } from '../contract/events.js';
import { finiteCost, finiteCount } from '../contract/numbers.js';

export abstract class RunEvents {
  abstract readonly adwId: string;
  /** Whether the user interrupted the run (Ctrl-C): a part stops asking for more. */
  abstract get interrupted(): boolean;
  abstract emit(event: RunEvent): void;

  /** Live figures of the attempt in flight (not yet charged); consumers add them to the phase's settled figures. */
  liveUsage(phase: string, tokens: number, cost: number): void {
    this.emit({
      type: 'usage',
      adwId: this.adwId,
      ts: Date.now(),
      phase,
      tokens: finiteCount(tokens),
      cost: finiteCost(cost),
    });
  }

  activity(phase: string, activity: Activity): void {
    this.emit({ type: 'activity', adwId: this.adwId, ts: Date.now(), phase, activity });
  }

  attemptStarted(
    phase: string,
    attempt: number,
    attempts: number,
    extra: { sessionId?: string; model?: string; modelFrom?: string } = {},
  ): void {
    this.emit({ type: 'attempt_started', adwId: this.adwId, ts: Date.now(), phase, attempt, attempts, ...extra });
  }
}
