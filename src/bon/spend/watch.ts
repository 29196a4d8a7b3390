// Spend control and race policies of a best-of-N run, as one watcher the arms report to. It knows money and counts,
// never processes: each arm's turn lends it two levers (steer the live session, stop the turn) and the session lends
// it one (stop the batch). The run's cap is held before each model call: a node takes a reservation (./budgetServer.ts,
// the node side in .pi/lib/spend-gate.ts) and gets one only while what is spent and reserved leaves room for it;
// near the cap the arms' calls go one at a time, so the run's cap is passed by one call at most, whatever the number
// of arms at once. Once the batch stopped, no reservation and no tool is given. Caps are also checked after every
// model call (pi's message_end); an arm's own calls are one after another, so its cap is passed by the call that
// crossed it. The soft cap (80 %) is a word to the agent, once: finish now and report.
import { formatCost } from '../../contract/format.js';
import { formatDuration } from '../../contract/duration.js';
import type { StopOrder } from '../../contract/errors.js';

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

/** Why the batch stopped at the run's cap: what the stopped arms say (the figure is the final line's, once all is in). */
export function runCapStopMotif(cap: number): string {
  return `budget: the run reached its cap of ${formatCap(cap)} (--max-cost) — the batch stopped`;
}

/** The run's spend at its cap, once every call in flight is in: the one figure the final line, the harvest and `runs` show. */
export function runCapMotif(spent: number, cap: number): string {
  return `budget: the run spent ${formatCost(spent)}, its cap is ${formatCap(cap)} (--max-cost)`;
}

/** A reservation's answer: granted (its id, given back with the call's cost), or refused with why. */
export type Reservation = { ok: true; id: string } | { ok: false; reason: string };

/** How much a reservation holds: the dearest call seen so far, with a margin (a conversation's calls grow). */
export const RESERVE_MARGIN = 1.5;

export function raceMotif(green: number, k: number): string {
  return `stopped: ${green} arm${green === 1 ? '' : 's'} already green (--stop-after-green ${k})`;
}

export function deadlineMotif(ms: number): string {
  return `stopped: the run's deadline (${formatDuration(ms)}) passed`;
}

/** A call in flight: which node holds it (its FACTORY_PHASE) and how much of the budget it holds. */
interface Held {
  key: string;
  amount: number;
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
  /** Set once a run cap stopped the batch and every call in flight is in: the final figure's motif (exit 3). */
  exhausted?: string;
  /** The run cap was reached: the batch is stopping, its final figure waits for the calls in flight. */
  private capReached = false;
  /** Cancels the deadline's timer, once it is set. */
  private cancelDeadline?: () => void;
  /** When the deadline fires: a wall-clock timer; a test injects its own clock and fires it on an event. */
  clock: (ms: number, fire: () => void) => () => void = (ms, fire) => {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  };
  /** Reservations given and not yet given back, by id. */
  private readonly held = new Map<string, Held>();
  /** Asks waiting for room (near the cap): answered in order as calls come in. */
  private readonly waiting: Array<{ key: string; answer: (r: Reservation) => void }> = [];
  /** What the nodes gave back (each call's cost), over what the watch saw before the first reservation. */
  private settledSum = 0;
  private base?: number;
  private dearest = 0;
  private nextId = 0;
  /** Stops deferred until a node's call in flight is in (a budget stop never cuts a call it already paid for). */
  private readonly afterCall = new Map<string, Array<() => void>>();

  constructor(
    readonly policy: BonPolicy,
    private readonly hooks: SpendHooks,
  ) {}

  /** The run's deadline counts from now. */
  start(): void {
    const ms = this.policy.deadlineMs;
    if (ms === undefined || this.cancelDeadline) return;
    this.cancelDeadline = this.clock(ms, () => this.stopBatch({ motif: deadlineMotif(ms), kind: 'race' }));
  }

  dispose(): void {
    this.cancelDeadline?.();
    for (const wait of this.waiting.splice(0)) wait.answer({ ok: false, reason: 'the run is over' });
    this.held.clear();
    this.drained();
  }

  /** The run's spend so far: what the arms and the primer reported, or what the nodes gave back when that is ahead. */
  total(): number {
    let sum = 0;
    for (const v of this.spent.values()) sum += v;
    return this.base === undefined ? sum : Math.max(sum, this.base + this.settledSum);
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

  // ---------- the gate: a reservation before each model call ----------

  /** A node asks for one model call. Granted while the run's cap leaves room; held while others' calls are in flight. */
  reserve(key: string): Promise<Reservation> {
    this.base ??= this.total();
    return new Promise((answer) => {
      this.waiting.push({ key, answer });
      this.serve();
    });
  }

  /** A node's call is in (its cost, from pi's message_end): the room it held goes back, minus what it cost. */
  settle(id: string, cost: number): void {
    const held = this.held.get(id);
    if (!held) return;
    this.held.delete(id);
    const usd = Number.isFinite(cost) && cost > 0 ? cost : 0;
    this.settledSum += usd;
    this.dearest = Math.max(this.dearest, usd);
    for (const stop of this.afterCall.get(held.key)?.splice(0) ?? []) stop();
    this.checkRun();
    this.serve();
    this.drained();
  }

  /**
   * A node's last word before its request leaves (pi's before_provider_request): a reservation granted before the
   * batch stopped does not carry a request past the stop — it goes back, and the call is never sent.
   */
  go(id: string): Reservation {
    if (!this.stopped) return { ok: true, id };
    const held = this.held.get(id);
    if (held) {
      this.held.delete(id);
      for (const stop of this.afterCall.get(held.key)?.splice(0) ?? []) stop();
      this.serve();
      this.drained();
    }
    return { ok: false, reason: this.stopped.motif };
  }

  /** Why a node may not start a tool (the batch stopped), or undefined. */
  toolRefusal(): string | undefined {
    return this.stopped?.motif;
  }

  /** The node holds a reservation: its call is in flight. */
  inFlight(key: string): boolean {
    for (const held of this.held.values()) if (held.key === key) return true;
    return false;
  }

  /** `stop` once the node's call in flight is in (at once when none is). */
  stopAfterCall(key: string, stop: () => void): void {
    if (!this.inFlight(key)) return stop();
    const list = this.afterCall.get(key) ?? [];
    list.push(stop);
    this.afterCall.set(key, list);
  }

  /** A node whose session ended (its pi gone): what it held goes back, what it waited for is refused. */
  release(key: string, reason = 'the attempt ended'): void {
    for (const [id, held] of this.held) if (held.key === key) this.held.delete(id);
    for (const stop of this.afterCall.get(key)?.splice(0) ?? []) stop();
    for (let i = this.waiting.length - 1; i >= 0; i -= 1) {
      if (this.waiting[i]!.key === key) this.waiting.splice(i, 1)[0]!.answer({ ok: false, reason });
    }
    this.serve();
    this.drained();
  }

  /** Answers the waiting asks in order: a grant while there is room, or the last call when nothing else is in flight. */
  private serve(): void {
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!;
      if (this.stopped) {
        this.waiting.shift();
        next.answer({ ok: false, reason: this.stopped.motif });
        continue;
      }
      const cap = this.policy.maxCost;
      const amount = this.dearest * RESERVE_MARGIN;
      if (cap !== undefined) {
        const spent = this.total();
        if (spent >= cap) {
          this.reachCap();
          continue;
        }
        let committed = spent;
        for (const held of this.held.values()) committed += held.amount;
        // No room for one more call beside the ones in flight: it waits for them (the last call goes alone).
        if (committed + amount > cap && this.held.size > 0) return;
      }
      this.waiting.shift();
      const id = `r${(this.nextId += 1)}`;
      this.held.set(id, { key: next.key, amount });
      next.answer({ ok: true, id });
    }
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
    if (cap === undefined || this.capReached) return;
    const total = this.total();
    if (total >= cap) this.reachCap();
    else if (total >= cap * SOFT_CAP && !this.warned.has('run')) {
      this.warned.add('run');
      this.hooks.note({ kind: 'wrap_up', spent: total, cap, scope: 'run' });
      for (const levers of this.levers.values()) levers.steer(wrapUpSteer(total, cap, 'run'));
    }
  }

  /** The run's cap is reached: the batch stops now; its figure is said once the calls in flight are in. */
  private reachCap(): void {
    if (this.capReached) return;
    this.capReached = true;
    this.stopBatch({ motif: runCapStopMotif(this.policy.maxCost!), kind: 'budget' });
    this.drained();
  }

  /** Every call in flight at the cap is in: the run's final figure, said once. */
  private drained(): void {
    if (!this.capReached || this.exhausted || this.held.size > 0) return;
    const cap = this.policy.maxCost!;
    const spent = this.total();
    const motif = runCapMotif(spent, cap);
    this.exhausted = motif;
    this.hooks.note({ kind: 'capped', spent, cap, scope: 'run', motif });
  }

  private stopBatch(order: StopOrder): void {
    if (this.stopped) return;
    this.stopped = order;
    this.cancelDeadline?.();
    this.hooks.stopBatch(order);
    this.serve();
  }
}

// ---------- reading the flags ----------

/** A money flag's value: a positive, finite number of dollars (a leading `$` allowed); a motif otherwise. */
export function parseUsd(flag: string, value: unknown): number | { motif: string } {
  const text =
    typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim().replace(/^\$/, '') : '';
  const n = text === '' || !/^[+]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number.NaN : Number(text);
  if (!Number.isFinite(n) || n <= 0)
    return {
      motif: `${flag} takes a positive amount of dollars, e.g. ${flag} 0.50 (got ${JSON.stringify(String(value ?? ''))})`,
    };
  return n;
}
