// When an arm may send its first request. A provider serves a prompt prefix from its cache only once a response to
// it has begun: arms that ask at once all pay for the primer's context in full. On the primer's own model the
// primer's answer has long begun, so those arms start together. On any other model the first arm starts alone and
// the others wait for its first token (or its end, whichever comes first), then ask with the prefix cached. An arm
// waits after its pi has started and its fork was checked, so the wait hides the start-up.
export interface GateTicket {
  /** The arm that the wait is for, when there is one. */
  after?: number;
  /** Settles once this arm may ask. */
  ready: Promise<void>;
  /** This arm's answer has begun (or it ended): the arms waiting on it may go. Idempotent. */
  open(): void;
}

const key = (model: string | undefined) => model ?? '';

export class PrefixGate {
  private readonly warm = new Map<string, { arm?: number; ready: Promise<void> }>();

  constructor(primerModel: string | undefined) {
    this.warm.set(key(primerModel), { ready: Promise.resolve() });
  }

  enter(arm: number, model: string | undefined): GateTicket {
    const known = this.warm.get(key(model));
    if (known) return { ...(known.arm !== undefined ? { after: known.arm } : {}), ready: known.ready, open: () => undefined };
    let open = () => undefined as void;
    const ready = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.warm.set(key(model), { arm, ready });
    return { ready: Promise.resolve(), open };
  }
}

/** Waits for `ready`, or throws `onAbort()` once `signal` is aborted. */
export async function waitUnlessAborted(ready: Promise<void>, signal: AbortSignal, onAbort: () => Error): Promise<void> {
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
