// Who did it: arms working at once share the user's `.git`, so what one arm did there is found by whichever check
// comes first — at the end of another arm's turn, once. The watch checks the guard (./gitGuard.ts) each time a tool
// that can reach past the agent's tree ends (a shell; the file tools go through the fence, which keeps them out of
// the user's repository), and lays each act found on the phases whose such tool ran since the last check: the arm
// that acted is red for its own act, the others are not. Two arms whose shells ran at once both carry it, and say so.
import { restoreGitDir, type GitDirSnapshot } from './gitGuard.js';
import type { GitxOptions } from './gitx.js';

/** Tools the fence reads the paths of (../../.pi/lib/fence.ts): none can write the user's `.git`. */
const FENCED_TOOLS = new Set(['read', 'write', 'edit', 'grep', 'find', 'ls']);
/** Acts found when no phase's tool ran: the turn that ends next carries them. */
const UNCLAIMED = '';

export class GitWatch {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly running = new Map<string, number>();
  private readonly since = new Set<string>();
  private readonly found = new Map<string, string[]>();

  constructor(
    readonly root: string,
    readonly snapshot: GitDirSnapshot,
    private readonly git?: GitxOptions,
  ) {}

  toolStart(phase: string, tool: string): void {
    if (FENCED_TOOLS.has(tool)) return;
    this.running.set(phase, (this.running.get(phase) ?? 0) + 1);
    this.since.add(phase);
  }

  toolEnd(phase: string, tool: string): void {
    if (FENCED_TOOLS.has(tool)) return;
    this.running.set(phase, Math.max(0, (this.running.get(phase) ?? 0) - 1));
    void this.check().catch(() => undefined);
  }

  /** Checks the guard now (after the checks already asked for): the acts found are laid on their phases and undone. */
  check(): Promise<void> {
    const next = this.chain.then(() => this.once());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async once(): Promise<void> {
    const suspects = new Set([...this.since, ...[...this.running].filter(([, n]) => n > 0).map(([phase]) => phase)]);
    this.since.clear();
    const acts = await restoreGitDir(this.root, this.snapshot, this.git);
    if (acts.length === 0) return;
    if (suspects.size === 0) suspects.add(UNCLAIMED);
    const together = suspects.size > 1 ? ` (while ${[...suspects].sort().join(', ')} ran shells at once)` : '';
    for (const phase of suspects) {
      const list = this.found.get(phase) ?? [];
      for (const act of acts) if (!list.includes(`${act}${together}`)) list.push(`${act}${together}`);
      this.found.set(phase, list);
    }
  }

  /**
   * At the end of `phase`'s turn: the guard checked once more, and the acts laid on it (and the unclaimed ones).
   * Without a phase (one agent at a time: the primer, an arm in place), every act found is its.
   */
  async endTurn(phase?: string): Promise<string[]> {
    await this.check();
    const taken: string[] = [];
    for (const [key, acts] of this.found) {
      if (phase !== undefined && key !== phase && key !== UNCLAIMED) continue;
      for (const act of acts) if (!taken.includes(act)) taken.push(act);
      this.found.delete(key);
    }
    if (phase === undefined) this.running.clear();
    else this.running.delete(phase);
    return taken;
  }
}
