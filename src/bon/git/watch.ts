// Who did it: arms working at once share the user's `.git`, so what one arm did there is found by whichever check
// comes first — at the end of another arm's turn, once. The watch checks the guard (./guard.ts) each time a tool
// that can reach past the agent's tree ends (a shell; the file tools go through the fence, which keeps them out of
// the user's repository), and lays each act found on the phases whose such tool ran since the last check: the arm
// that acted is red for its own act, the others are not. Two arms whose shells ran at once both carry it, and say so.
import { REPORT_TOOL } from '../../contract/typedGate.js';
import { restoreGitDir, type GitDirSnapshot } from './guard.js';
import type { GitxOptions } from './command.js';

/**
 * Tools that cannot write the user's `.git`: those the fence reads the paths of (../../../.pi/lib/fence.ts), and the
 * factory's own report (it only hands the envelope back). An arm calling its report while another arm's shell
 * moves a ref is not a suspect: counting it made an innocent arm share the blame on a busy machine.
 */
const FENCED_TOOLS = new Set(['read', 'write', 'edit', 'grep', 'find', 'ls', REPORT_TOOL]);
/** Acts found when no phase's tool ran: the turn that ends next carries them. */
const UNCLAIMED = '';

export class GitWatch {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly running = new Map<string, number>();
  private readonly since = new Set<string>();
  private readonly found = new Map<string, string[]>();
  /** Turns under way: an act found with no shell known to run is held while another turn may still claim it. */
  private readonly live = new Set<string>();

  constructor(
    readonly root: string,
    readonly snapshot: GitDirSnapshot,
    private readonly git?: GitxOptions,
  ) {}

  /** A turn begins: until it ends, an unclaimed act may be its (its shell's start event can arrive after the act). */
  begin(phase: string): void {
    this.live.add(phase);
  }

  toolStart(phase: string, tool: string): void {
    this.live.add(phase);
    if (FENCED_TOOLS.has(tool)) return;
    this.running.set(phase, (this.running.get(phase) ?? 0) + 1);
    this.since.add(phase);
  }

  toolEnd(phase: string, tool: string): void {
    if (FENCED_TOOLS.has(tool)) return;
    this.running.set(phase, Math.max(0, (this.running.get(phase) ?? 0) - 1));
    // pi's events come over a pipe, after the fact: a check may find an act while the shell that did it is running
    // but not yet announced. The first shell to end after such a find is the one that was running: it carries it.
    this.chain = this.chain.then(() => this.claim(phase));
    void this.check().catch(() => undefined);
  }

  /** Checks the guard now (after the checks already asked for): the acts found are laid on their phases and undone. */
  check(): Promise<void> {
    const next = this.chain.then(() => this.once());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private claim(phase: string): void {
    const unclaimed = this.found.get(UNCLAIMED);
    if (!unclaimed) return;
    this.found.delete(UNCLAIMED);
    const list = this.found.get(phase) ?? [];
    for (const act of unclaimed) if (!list.includes(act)) list.push(act);
    this.found.set(phase, list);
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
    // Unclaimed acts (no shell known to run: a job left running, or a shell not yet announced) go to the turn that
    // ends last, once no other turn can claim them; one agent at a time (no phase) takes everything.
    const othersLive = phase !== undefined && [...this.live].some((p) => p !== phase);
    for (const [key, acts] of this.found) {
      if (phase !== undefined && key !== phase && (key !== UNCLAIMED || othersLive)) continue;
      for (const act of acts) if (!taken.includes(act)) taken.push(act);
      this.found.delete(key);
    }
    if (phase === undefined) {
      this.running.clear();
      this.live.clear();
    } else {
      this.running.delete(phase);
      this.live.delete(phase);
    }
    return taken;
  }
}
