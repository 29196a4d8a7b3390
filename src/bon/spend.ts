// Spend control and race policies of a best-of-N run, as one watcher the arms report to. It knows money and counts,
// never processes: each arm's turn lends it two levers (steer the live session, stop the turn) and the session lends
// it one (stop the batch). Caps are checked after every model call (pi's message_end), so a hard cap overshoots by
// at most the call in flight. The soft cap (80 %) is a word to the agent, once: finish now and report.
import type { StopOrder } from '../pi/guards.js';
import { formatCost } from '../format.js';
import { formatDuration } from '../duration.js';

export interface BonPolicy {
  /** The run's cap in USD: the primer and every arm together (`--max-cost`, roster `bon.max_cost`). */
  maxCost?: number;
  /** One arm's cap in USD, its own spend (the primer excluded): roster `bon.arm_max_cost` and the role's limit. */
  armMaxCost?: number;
  /** Stop the race once this many arms are green (`--stop-after-green k`). */
  stopAfterGreen?: number;
  /** From the run's start: once it passes, the arms still at work are stopped (`--deadline 20m`). */
  deadlineMs?: number;
  /** A forecast above this many dollars waits for a yes (the board asks; headless needs `--yes`). */
  confirmAbove?: number;
  /** `--yes`: the forecast never waits. */
  yes?: boolean;
}

/** The share of a cap at which the agent is told to wrap up. */
export const SOFT_CAP = 0.8;

/** What the agent is told at its soft cap (pi `steer`: delivered before its next model call). */
export function wrapUpSteer(spent: number, cap: number, what: 'arm' | 'run'): string {
  return [
    `Budget notice from the factory: ${what === 'arm' ? 'this attempt' : 'the run'} has spent ${formatCost(spent)} of its ${formatCap(cap)} cap.`,
    'Wrap up now: make no new exploration, finish the change you are making, and report through report_phase at once',
    '(status "failure" with what is left to do, if it is not done).',
  ].join(' ');
}

/** The levers of one arm's running turn. */
export interface TurnLevers {
  steer(text: string): void;
  stop(order: StopOrder): void;
}

export interface SpendHooks {
  /** Stops every arm still at work, and every arm not started yet. */
  stopBatch(order: StopOrder): void;
  /** A cap was crossed or a word was sent: what the board and the log show. */
  note(event: SpendNote): void;
}

export type SpendNote =
  | { kind: 'wrap_up'; arm?: number; spent: number; cap: number; scope: 'arm' | 'run' }
  | { kind: 'capped'; arm?: number; spent: number; cap: number; scope: 'arm' | 'run'; motif: string };

/** A cap as the user wrote it ($0.03, not $0.0300): it is their number, not a measured one. */
export function formatCap(usd: number): string {
  return `$${Number(usd.toFixed(6))}`;
}

export function armCapMotif(spent: number, cap: number): string {
  return `budget: the arm spent ${formatCost(spent)}, its cap is ${formatCap(cap)}`;
}

export function runCapMotif(spent: number, cap: number): string {
  return `budget: the run spent ${formatCost(spent)}, its cap is ${formatCap(cap)} (--max-cost) — the batch stopped`;
}

export function raceMotif(green: number, k: number): string {
  return `stopped: ${green} arm${green === 1 ? '' : 's'} already green (--stop-after-green ${k})`;
}

export function deadlineMotif(ms: number): string {
  return `stopped: the run's deadline (${formatDuration(ms)}) passed`;
}

export class SpendWatch {
  /** Each phase's spend so far (live while it runs, settled once it ended): the primer as `prime`, arms by number. */
  private readonly spent = new Map<string, number>();
  private readonly levers = new Map<number, TurnLevers>();
  private readonly caps = new Map<number, number>();
  private readonly warned = new Set<string>();
  private greens = 0;
  /** Why the batch was stopped, once it was. */
  stopped?: StopOrder;
  /** Set when a run cap stopped the batch (the run then exits 3). */
  exhausted?: string;
  private deadline?: ReturnType<typeof setTimeout>;

  constructor(
    readonly policy: BonPolicy,
    private readonly hooks: SpendHooks,
  ) {}

  /** The run's deadline counts from now. */
  start(): void {
    const ms = this.policy.deadlineMs;
    if (ms === undefined || this.deadline) return;
    this.deadline = setTimeout(() => this.stopBatch({ motif: deadlineMotif(ms), kind: 'race' }), ms);
    this.deadline.unref();
  }

  dispose(): void {
    clearTimeout(this.deadline);
  }

  total(): number {
    let sum = 0;
    for (const v of this.spent.values()) sum += v;
    return sum;
  }

  /** The arm's cap (raised from the board when it paused), or undefined without one. */
  capOf(arm: number): number | undefined {
    return this.caps.get(arm) ?? this.policy.armMaxCost;
  }

  raise(arm: number, cap: number): void {
    this.caps.set(arm, cap);
    this.warned.delete(`arm:${arm}`);
  }

  /** An arm's turn begins: its levers are lent until `end`. */
  begin(arm: number, levers: TurnLevers): void {
    this.levers.set(arm, levers);
  }

  end(arm: number): void {
    this.levers.delete(arm);
  }

  primerUsage(cost: number): void {
    this.spent.set('prime', cost);
    this.checkRun();
  }

  /** The arm's spend so far, all its turns together: checked against its cap, then the run's. */
  armUsage(arm: number, cost: number): void {
    this.spent.set(`arm:${arm}`, cost);
    const cap = this.capOf(arm);
    const levers = this.levers.get(arm);
    if (cap !== undefined && levers) {
      if (cost >= cap) {
        const motif = armCapMotif(cost, cap);
        this.hooks.note({ kind: 'capped', arm, spent: cost, cap, scope: 'arm', motif });
        levers.stop({ motif, kind: 'budget' });
      } else if (cost >= cap * SOFT_CAP && !this.warned.has(`arm:${arm}`)) {
        this.warned.add(`arm:${arm}`);
        this.hooks.note({ kind: 'wrap_up', arm, spent: cost, cap, scope: 'arm' });
        levers.steer(wrapUpSteer(cost, cap, 'arm'));
      }
    }
    this.checkRun();
  }

  /** An arm ended: a green one may end the race. */
  armSettled(arm: number, green: boolean, cost: number): void {
    this.spent.set(`arm:${arm}`, cost);
    this.levers.delete(arm);
    if (!green) return;
    this.greens += 1;
    const k = this.policy.stopAfterGreen;
    if (k !== undefined && this.greens >= k) this.stopBatch({ motif: raceMotif(this.greens, k), kind: 'race' });
  }

  private checkRun(): void {
    const cap = this.policy.maxCost;
    if (cap === undefined || this.exhausted) return;
    const total = this.total();
    if (total >= cap) {
      const motif = runCapMotif(total, cap);
      this.exhausted = motif;
      this.hooks.note({ kind: 'capped', spent: total, cap, scope: 'run', motif });
      this.stopBatch({ motif, kind: 'budget' });
    } else if (total >= cap * SOFT_CAP && !this.warned.has('run')) {
      this.warned.add('run');
      this.hooks.note({ kind: 'wrap_up', spent: total, cap, scope: 'run' });
      for (const levers of this.levers.values()) levers.steer(wrapUpSteer(total, cap, 'run'));
    }
  }

  private stopBatch(order: StopOrder): void {
    if (this.stopped) return;
    this.stopped = order;
    clearTimeout(this.deadline);
    this.hooks.stopBatch(order);
  }
}

// ---------- reading the flags ----------

/** A money flag's value: a positive, finite number of dollars (a leading `$` allowed); a motif otherwise. */
export function parseUsd(flag: string, value: unknown): number | { motif: string } {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim().replace(/^\$/, '') : '';
  const n = text === '' || !/^[+]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number.NaN : Number(text);
  if (!Number.isFinite(n) || n <= 0) return { motif: `${flag} takes a positive amount of dollars, e.g. ${flag} 0.50 (got ${JSON.stringify(String(value ?? ''))})` };
  return n;
}
