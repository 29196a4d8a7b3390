// The stops every agent attempt has besides its own end: the whole-attempt deadline, the user's interrupt and,
// when the caller sees progress, the idle watchdog. One place for their timers and their cleanup; json mode, the
// RPC turn and the claude adapter each say only what their motifs are.
import { stopOrderOf, type StopKind } from '../contract/errors.js';

export type StopAttempt = (motif: string, kind: StopKind) => void;

export interface GuardOptions {
  /** Whole-attempt deadline. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** The motif of the user's interrupt. */
  abortMotif?: string;
  /** No progress for `ms` → stop(motif, 'stalled'); every `progress()` starts the wait over. */
  idle?: { ms: number; motif: string };
}

export interface AttemptGuard {
  /** A sign of life: the idle watchdog starts over (a no-op without one). */
  progress(): void;
  /** Every timer and listener off; idempotent, to call once the attempt is over (or stopped). */
  disarm(): void;
}

export function guardAttempt(opts: GuardOptions, stop: StopAttempt): AttemptGuard {
  const { idle } = opts;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let disarmed = false;
  const armIdle = () => {
    if (!idle || disarmed) return;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => stop(idle.motif, 'stalled'), idle.ms);
  };
  armIdle();
  const deadline = setTimeout(
    () => stop(`harness silent after ${Math.round(opts.timeoutMs / 1000)} s — request timeout`, 'timeout'),
    opts.timeoutMs,
  );
  const onAbort = () => {
    const order = stopOrderOf(opts.signal?.reason);
    stop(order?.motif ?? opts.abortMotif ?? 'interrupted by the user', order?.kind ?? 'aborted');
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    progress: armIdle,
    disarm() {
      disarmed = true;
      clearTimeout(idleTimer);
      clearTimeout(deadline);
      opts.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** The idle motif of a pi process or turn that streamed nothing for `ms`. */
export function idleMotif(ms: number, what: string): string {
  return `no progress from pi for ${Math.round(ms / 1000)} s — watchdog ended ${what}`;
}
