// What a resumed run hands the runner: the phases finished in an earlier life of the run (replayed, not run
// again) and the phase to continue. Apart from the runner so that its types travel without it.
import type { FailureKind } from '../contract/errors.js';

export interface ResumeOptions {
  /**
   * Phases finished in an earlier life of this run: reported, charged, not run again — green ones, and red optional
   * ones (`status: 'failed'`, a best-of-N arm that ended red keeps its verdict).
   */
  carried: Map<string, CarriedResult>;
  /** The phase to continue, with a fresh attempt budget. */
  phase: string;
  /** Its first ask when its live session already holds the mission. */
  continuation?: string;
  /** Replay carried phases wherever they are (best-of-N: finished arms after an unfinished one), not only before `phase`. */
  anywhere?: boolean;
}

export interface CarriedResult {
  seconds: number;
  tokens: number;
  cost: number;
  attempt: number;
  attempts: number;
  sessionId?: string;
  result: unknown;
  status?: 'ok' | 'failed';
  motif?: string;
  failure?: FailureKind;
}
