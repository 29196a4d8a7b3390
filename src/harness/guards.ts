// The two stops every harness attempt has besides its own watchdog: the whole-attempt deadline and the user's
// interrupt. One place for their wording and their cleanup.

export type StopAttempt = (motif: string, kind: 'timeout' | 'aborted') => void;

/** Arms the deadline and the abort signal; returns the disarm to call once the attempt is over. */
export function guardAttempt(opts: { timeoutMs: number; signal?: AbortSignal }, stop: StopAttempt): () => void {
  const deadline = setTimeout(() => stop(`harness silent after ${Math.round(opts.timeoutMs / 1000)} s — request timeout`, 'timeout'), opts.timeoutMs);
  const onAbort = () => stop('interrupted by the user', 'aborted');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    clearTimeout(deadline);
    opts.signal?.removeEventListener('abort', onAbort);
  };
}
