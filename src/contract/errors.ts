// Error types that cross module boundaries. Each carries what the user needs to act on it in one line, and derives
// from FactoryError: its failure kind, hence its exit code (./exit.ts, the one table).
import { EXIT, type ExitCode, type ExitKind } from './exit.js';

/**
 * Why an attempt failed, as a type that travels on the failure events (never parsed back from a motif):
 * - the answer was judged: `verdict` (no or invalid envelope, the agent reports a failure), `gate` (a payload
 *   gate went red), `check` (a phase's own precondition: spec missing, tree dirty), `empty` (no answer at all);
 * - the turn was stopped: `interrupted` (the user, before it ran), `aborted` (the user or an arm's abort),
 *   `stalled` (no progress), `timeout` (the deadline), `guard` (a circuit breaker tripped), `budget` (a spend cap
 *   of the run or of an arm was reached), `race` (a race policy ended it: enough arms were green, the deadline);
 * - the agent process: `crashed` / `exit` (pi died or exited mid-turn), `handled` (an extension took the prompt),
 *   `model_error` (the provider failed the turn), `protocol` (output not understood), `refused`, `busy`, `clone`, `switch`, `model` (RPC commands);
 * - the installation: `socle`, `version`, `model_mismatch`, `resume`, `spawn`, `infrastructure`; bad input: `usage`;
 * - anything else: `error`.
 */
export type FailureKind =
  | 'verdict'
  | 'gate'
  | 'check'
  | 'empty'
  | 'interrupted'
  | 'aborted'
  | 'stalled'
  | 'timeout'
  | 'guard'
  | 'budget'
  | 'race'
  | 'crashed'
  | 'exit'
  | 'handled'
  | 'model_error'
  | 'protocol'
  | 'refused'
  | 'busy'
  | 'clone'
  | 'fork'
  | 'switch'
  | 'model'
  | 'socle'
  | 'version'
  | 'model_mismatch'
  | 'resume'
  | 'spawn'
  | 'auth'
  | 'infrastructure'
  | 'usage'
  | 'error';

const INFRASTRUCTURE: ReadonlySet<FailureKind> = new Set([
  'socle',
  'version',
  'model_mismatch',
  'resume',
  'spawn',
  'auth',
  'infrastructure',
  'usage',
]);
/** Failures another attempt cannot mend: the installation's, a tripped breaker (a retry would get a fresh budget). */
const FINAL: ReadonlySet<FailureKind> = new Set([...INFRASTRUCTURE, 'guard', 'budget', 'race']);

/** Whether another attempt in the same live session may succeed. */
export function isRetryable(kind: FailureKind): boolean {
  return !FINAL.has(kind);
}

/** Whether the failure is the installation's (exit 2), not the workflow's (exit 1). */
export function isInfrastructure(kind: FailureKind): boolean {
  return INFRASTRUCTURE.has(kind);
}

/** What a failure of `kind` ends a command as: the installation's or bad input (2), a cap (3), the user (130), else 1. */
export function exitOfFailure(kind: FailureKind): ExitKind {
  if (isInfrastructure(kind)) return 'infrastructure';
  if (kind === 'budget') return 'budget';
  if (kind === 'interrupted') return 'interrupted';
  return 'failed';
}

/** The root of every error the cockpit raises on purpose: a one-line message and a failure kind, hence an exit code. */
export class FactoryError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
  ) {
    super(message);
  }

  get exitCode(): ExitCode {
    return EXIT[exitOfFailure(this.kind)];
  }
}

/** A failure of the agent harness (pi could not run, died, stalled, or its verdict refused the attempt). */
export class HarnessError extends FactoryError {
  override readonly name = 'HarnessError';
  constructor(
    message: string,
    readonly sessionId: string,
    readonly evidence: { tokens?: number; cost?: number; stderrTail?: string; kind?: FailureKind } = {},
  ) {
    super(message, evidence.kind ?? 'error');
  }
}

/** Bad usage or a broken installation: exit 2, one line, nothing written. */
export class UsageError extends FactoryError {
  override readonly name: string = 'UsageError';
  constructor(message: string) {
    super(message, 'usage');
  }
}

/** The installation cannot run the workflow (pi missing, node broken, resume from another folder): exit 2. */
export class InfrastructureError extends FactoryError {
  override readonly name = 'InfrastructureError';
  constructor(message: string, kind: FailureKind = 'infrastructure') {
    super(message, kind);
  }
}

/** The user interrupted the run (Ctrl-C / SIGTERM): exit 130. */
export class InterruptedError extends FactoryError {
  override readonly name = 'InterruptedError';
  constructor(message: string) {
    super(message, 'interrupted');
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Every line break Unicode knows: CRLF, LF, VT, FF, CR, NEL (U+0085), LINE and PARAGRAPH SEPARATOR (U+2028/9).
 * A terminal or a log reader may break a line on any of them, so a motif must hold none.
 */
export const LINE_BREAK = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/;

/**
 * At most `max` code points of `text`, the last one an ellipsis when it is cut. Counted in code points, not
 * UTF-16 units, so a cut never splits a surrogate pair (a lone surrogate is not valid UTF-8 in a file or a tty).
 */
export function clip(text: string, max: number): string {
  // A string of at most `max` units has at most `max` code points: the common case costs nothing.
  if (text.length <= max) return text;
  if (max < 1) return '';
  let at = 0;
  let keep = 0;
  for (let count = 0; at < text.length; count += 1) {
    if (count === max - 1) keep = at;
    if (count === max) return `${text.slice(0, keep)}…`;
    const unit = text.charCodeAt(at);
    const pair =
      unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00;
    at += pair ? 2 : 1;
  }
  return text;
}

/** First non-blank line of a message, trimmed and clipped to `max` code points: motifs are one line. */
export function firstLine(text: string, max = 300): string {
  const first = text.split(LINE_BREAK).find((l) => l.trim() !== '') ?? '';
  return clip(first.trim(), max);
}

/**
 * A reasoned failure of one attempt: the runner decides whether to retry. The message is the one-line motif
 * (logs, screen); `detail`, when given, is the fuller material the correction ask carries (e.g. a failing
 * test's output tail); `kind` says why, as a type.
 */
export class PhaseFailure extends FactoryError {
  override readonly name = 'PhaseFailure';
  constructor(
    message: string,
    readonly detail?: string,
    kind: FailureKind = 'verdict',
  ) {
    super(message, kind);
  }
}

/** The stops an attempt has besides its own end (the deadline, the user's interrupt, the idle watchdog, a cap, a race). */
export type StopKind = Extract<FailureKind, 'timeout' | 'aborted' | 'stalled' | 'budget' | 'race'>;

/**
 * Why a signal was aborted, when the one who aborted it says so (`controller.abort(order)`): a spend cap or a race
 * policy ends a turn with its own motif and kind, not as the user's interrupt.
 */
export interface StopOrder {
  motif: string;
  kind: Extract<StopKind, 'aborted' | 'budget' | 'race'>;
}

export function stopOrderOf(reason: unknown): StopOrder | undefined {
  if (typeof reason !== 'object' || reason === null) return undefined;
  const { motif, kind } = reason as Partial<StopOrder>;
  return typeof motif === 'string' && (kind === 'aborted' || kind === 'budget' || kind === 'race')
    ? { motif, kind }
    : undefined;
}
