// When an arm may send its first request. A provider serves a prompt prefix from its cache only once a response to
// it has begun. Every arm's first prompt is the primer's context, then the same ask: arms that ask at once all pay
// for whatever of it is not cached yet (on the primer's model, the ask; on any other model, everything). So on each
// model the first arm asks alone, and the others wait for its first token (or its end, whichever comes first), then
// ask with all of it cached. Caches are per model: arms on different models never wait on each other. An arm waits
// after its pi has started and its fork was checked, so the wait hides the start-up.
export interface GateTicket {
  /** The arm that the wait is for, when there is one. */
  after?: number;
  /** Settles once this arm may ask. */
  ready: Promise<void>;
  /** This arm's answer has begun (or it ended): the arms waiting on it may go. Idempotent. */
  open(): void;
}

export class PrefixGate {
  private readonly leaders = new Map<string, { arm: number; ready: Promise<void>; opened: boolean }>();

  enter(arm: number, model: string | undefined): GateTicket {
    const key = model ?? '';
    const leader = this.leaders.get(key);
    // An arm added once the leader has answered (`c` on the board) has nothing to wait for.
    if (leader?.opened) return { ready: Promise.resolve(), open: () => undefined };
    if (leader) return { after: leader.arm, ready: leader.ready, open: () => undefined };
    let resolve = () => undefined as void;
    const ready = new Promise<void>((r) => {
      resolve = r;
    });
    const entry = { arm, ready, opened: false };
    this.leaders.set(key, entry);
    return {
      ready: Promise.resolve(),
      open: () => {
        entry.opened = true;
        resolve();
      },
    };
  }
}

/** Waits for `ready`, or throws `onAbort()` once `signal` is aborted. */
export async function waitUnlessAborted(
  ready: Promise<void>,
  signal: AbortSignal,
  onAbort: () => Error,
): Promise<void> {
  if (signal.aborted) throw onAbort();
  let listener: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    listener = () => reject(onAbort());
    signal.addEventListener('abort', listener, { once: true });
  });
  try {
    await Promise.race([ready, aborted]);
  } finally {
    if (listener) signal.removeEventListener('abort', listener);
  }
}
