// Requests held before any byte of their answer (ScriptedModel.hold): a test drives a race by the moment a request
// arrives and the moment it lets it go, never by how fast the machine is.
export interface Hold<T> {
  arrived: Promise<T>;
  release(): void;
}

export class Holds<T> {
  private readonly byTape = new Map<
    string,
    Array<{ arrive: (r: T) => void; released: Promise<void>; release: () => void }>
  >();
  private readonly all = new Set<() => void>();

  add(tape: string): Hold<T> {
    let arrive!: (r: T) => void;
    let release!: () => void;
    const arrived = new Promise<T>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.all.add(release);
    const list = this.byTape.get(tape) ?? [];
    list.push({ arrive, released, release });
    this.byTape.set(tape, list);
    return { arrived, release };
  }

  /** A request landed on `tape`: resolves at once, or once the hold set for it is released. */
  async pass(tape: string, request: T): Promise<void> {
    const held = this.byTape.get(tape)?.shift();
    if (!held) return;
    held.arrive(request);
    await held.released;
  }

  releaseAll(): void {
    for (const release of this.all) release();
  }
}
