// The live side of a best-of-N run: one live session of the harness (pi in RPC mode) that the primer and the arms
// run in, the arms' ranks, an abort per arm, and what the board's keys ask of it (abort an arm, clone one more).
// It knows no workflow: the phases, and how one more arm's phase is built, come from the ADW that plans the batch.
import type { ArmRank, SpendForecast } from '../contract/events.js';
import { formatCost } from '../contract/format.js';
import { envelopeCard } from '../envelope/catalog.js';
import os from 'node:os';
import { errorMessage, HarnessError, InfrastructureError, PhaseFailure, type StopOrder } from '../contract/errors.js';
import type { AgentAnswer, AgentSession, SessionRequest } from '../harness/types.js';
import type { ArmTree } from './tree/armTree.js';
import { planOf, type Phase, type Run } from '../engine/runner.js';
import { MAX_ARMS, type BonCheck } from './check.js';
import type { GitDirSnapshot } from './git/guard.js';
import type { GitWatch } from './git/watch.js';
import { TriedLog } from './harvest/tried.js';
import type { PrefixGate } from './spend/prefixGate.js';
import { SpendWatch, type SpendNote } from './spend/watch.js';
import { forecastAbove } from './spend/lines.js';
import { HeadBaseline } from './headBaseline.js';
import { BON_TOOLS, type BonAdwOptions } from './sessionOptions.js';

export { BON_TOOLS, type BonAdwOptions, type JudgeSetup } from './sessionOptions.js';

/** How the workflow builds arm N's phase: injected by the ADW, so that `c` clones an arm the way the plan does. */
export type ArmPhaseFactory = (session: BonSession, arm: number) => Phase;

/** The live side of a best-of-N run: the live session, the primer, the arms, and what the keyboard asks of it. */
export class BonSession {
  rpc?: AgentSession; // the harness's live session (one pi RPC process), reopened on the primer if it died
  check?: BonCheck;
  /** The user's `.git` as it was before any agent ran (./git/guard.ts). */
  gitSnapshot?: GitDirSnapshot;
  /** Checks it while arms work at once, so that each act is laid on the arm that did it (./git/watch.ts). */
  gitWatch?: GitWatch;
  /** Each harvested patch's sealed bytes: a later agent that rewrites one is caught and the bytes put back. */
  readonly sealed = new Map<number, { file: string; bytes: Buffer }>();
  primerFile?: string;
  primerMessages = 0; // the primer session's message count: what each arm's fork must hold
  /** When each arm may send its first request (./spend/prefixGate.ts), made with the first arm of a worktree run. */
  prefixGate?: PrefixGate;
  /** The worktrees of this run (the primer's and each arm's), released by `close()` whatever happened. */
  readonly trees = new Map<string, ArmTree>();
  /** The live sessions of arms working at once (one pi process each), closed by `close()`. */
  readonly armAgents = new Map<number, AgentSession>();
  primer = { tokens: 0, cost: 0, sessionId: undefined as string | undefined };
  readonly arms = new Map<number, ArmRank>();
  private readonly armAborts = new Map<number, AbortController>();
  private readonly gateAborts = new Map<number, AbortController>();
  /** The primer's own stop: a run cap or the deadline reached while it reads. */
  private readonly primerAbort = new AbortController();
  /** Why the batch was stopped (a cap, a race policy): every arm still at work or not started yet ends so. */
  batchStop?: StopOrder;
  /** Arms paused at their cap, waiting for the board's raise (or their end). */
  readonly pauses = new Map<number, (raise: number | undefined) => void>();
  readonly spend: SpendWatch;
  /** Someone watches the board (the TUI sets it): an arm at its cap pauses for a raise, a high forecast asks. */
  watched = false;
  judge?: import('../contract/events.js').JudgeOrder; // the judge's order of the green arms, once the code accepted it
  forecast?: SpendForecast; // the fan-out's forecast, once the primer has read
  readonly tried = new TriedLog(); // what each arm tried that its guards refused or contained (./harvest/tried.ts)
  private confirmation?: (yes: boolean) => void;
  /** The spend gate every node of the run asks before a model call or a tool (./spend/budgetServer.ts), opened with the first. */
  private gate?: Promise<import('./spend/budgetServer.js').BudgetServer>;
  private starts: Promise<unknown> = Promise.resolve(); // the run's pi starts, one after another (see open)
  private harvested = false;
  private armPhase?: ArmPhaseFactory;
  phases: Phase[] = [];

  constructor(
    readonly run: Run,
    readonly opts: BonAdwOptions,
  ) {
    this.spend = new SpendWatch(opts.policy ?? {}, {
      stopBatch: (order) => this.stopBatch(order),
      note: (note) => this.noteSpend(note),
    });
  }

  private noteSpend(note: SpendNote): void {
    const { run } = this;
    // The run's cap, once every call in flight is in: its figure is the run's final one (the line exit 3 prints).
    if (note.kind === 'capped' && note.scope === 'run') run.budget = note.motif;
    run.emit({
      type: 'spend',
      adwId: run.adwId,
      ts: Date.now(),
      ...(note.arm !== undefined ? { phase: `arm_${note.arm}`, arm: note.arm } : {}),
      ...note,
      kind: note.kind,
    });
  }

  /** A cap or a race policy ends the batch: the arms at work are aborted, the ones not started never start. */
  stopBatch(order: StopOrder): void {
    if (this.batchStop) return;
    this.batchStop = order;
    if (order.kind === 'budget') this.run.budget ??= order.motif;
    this.run.emit({ type: 'race_stop', adwId: this.run.adwId, ts: Date.now(), motif: order.motif, kind: order.kind });
    // A budget stop lets a call already paid for come in (its cost is counted, no tool follows it); a race cuts it.
    const stop = (key: string, controller: AbortController) =>
      order.kind === 'budget' ? this.spend.stopAfterCall(key, () => controller.abort(order)) : controller.abort(order);
    stop('prime', this.primerAbort);
    for (const [arm, controller] of this.armAborts) stop(this.nodeKey(arm), controller);
    for (const resume of this.pauses.values()) resume(undefined);
  }

  /** The node an arm's calls come from (FACTORY_PHASE): its own pi in worktrees, the primer's in place. */
  nodeKey(arm: number): string {
    return this.opts.inPlace ? 'prime' : `arm_${arm}`;
  }

  /** The primer's turn signal (the baseline's too): the run's interrupt, the batch stopped, or the primer given up. */
  primerSignal(): AbortSignal {
    return AbortSignal.any([this.run.signal, this.primerAbort.signal]);
  }
  abandonPrimer = (): void => {
    this.primerAbort.abort(); // the primer failed for good: the baseline beside it stops with it
    this.baseline.stop.abort();
  };

  /**
   * Before the fan-out: what the arms should cost, from the primer's own calls and pi's prices, as an event. Above
   * the roster's threshold it waits for a yes: the board asks; headless, only `--yes` goes on (else exit 3).
   */
  async forecastFanOut(agent: AgentSession, primer: AgentAnswer, ask: string): Promise<void> {
    const [{ forecastFanOut }, { pastArms }] = await Promise.all([
      import('./spend/forecast.js'),
      import('../trace/pastArms.js'),
    ]);
    const prices = await agent.prices().catch(() => new Map());
    const arms = Array.from({ length: this.armCount() }, (_, i) => ({ arm: i + 1, model: this.modelOf(i + 1) }));
    const forecast = forecastFanOut({
      calls: primer.calls ?? [],
      primerCost: primer.cost,
      primerModel: this.opts.builderModel ?? this.modelOf(1),
      arms,
      prices,
      askTokens: Math.ceil(ask.length / 4),
      history: pastArms(this.opts.workspace),
      testOutputTokens: this.baseline.testOutputTokens,
    });
    const { policy = {} } = this.opts;
    const threshold = policy.confirmAbove;
    // A forecast above the run's cap says so before any arm: fanning out would end at the cap, not with the arms.
    const cap = policy.maxCost !== undefined && forecast.total.mid > policy.maxCost ? policy.maxCost : undefined;
    const confirm = (cap !== undefined || (threshold !== undefined && forecast.total.mid > threshold)) && !policy.yes;
    this.forecast = forecast;
    this.spend.release('prime');
    this.run.emit({
      type: 'forecast',
      adwId: this.run.adwId,
      ts: Date.now(),
      forecast,
      ...(threshold !== undefined ? { threshold } : {}),
      ...(confirm ? { confirm } : {}),
      ...(cap !== undefined ? { cap } : {}),
    });
    if (!confirm) return;
    const motif = `forecast ~${formatCost(forecast.total.mid)} is ${forecastAbove({ threshold, cap })}`;
    if (!this.watched) {
      this.run.budget = `budget: ${motif} — pass --yes to fan out`;
      throw new PhaseFailure(`${motif}: pass --yes to fan out (no arm was started)`, undefined, 'budget');
    }
    const yes = await new Promise<boolean>((resolve) => {
      this.confirmation = resolve;
      this.run.signal.addEventListener('abort', () => resolve(false), { once: true });
    }).finally(() => (this.confirmation = undefined));
    if (!yes) {
      this.run.budget = `budget: ${motif} — the fan-out was declined`;
      throw new PhaseFailure(`${motif}: the fan-out was declined (no arm was started)`, undefined, 'budget');
    }
  }

  /** `y` / `n` on the board while the forecast waits. Returns a motif when nothing waits. */
  confirmFanOut(yes: boolean): string | undefined {
    if (!this.confirmation) return 'no forecast waits for an answer';
    this.confirmation(yes);
    return undefined;
  }

  /** `+` on the board: a paused arm gets as much again as its cap (it goes on in the same session). */
  raiseArm(arm: number): string | undefined {
    const resume = this.pauses.get(arm);
    if (!resume) return `arm ${arm} is not paused at its cap`;
    resume((this.spend.capOf(arm) ?? 0) * 2);
    return undefined;
  }

  /**
   * A word from the board into an arm's live session (pi `steer`: read before its next model call), as typed; the
   * log shows it once pi has taken it (its reply). A motif when the arm has no turn running.
   */
  steerArm(arm: number, text: string): string | undefined {
    const message = text.trim();
    if (message === '') return 'nothing to send: type a message first';
    const agent =
      this.armAgents.get(arm) ??
      (this.opts.inPlace && this.arms.has(arm) && !this.settled.has(arm) ? this.rpc : undefined);
    if (!agent?.alive || this.settled.has(arm)) return `arm ${arm} has no turn running: nothing to steer`;
    const note = (text: string) => this.run.activity(`arm_${arm}`, { kind: 'note', text });
    agent.steer(message).then(
      () => note(`you: ${message}`),
      (error: unknown) => note(`the steer was refused: ${errorMessage(error)}`),
    );
    return undefined;
  }

  /** The gates on HEAD (./headBaseline.ts): beside the primer, then beside the arms; their gates wait for it. */
  readonly baseline = new HeadBaseline();

  /** The harvest's one ranking (./harvest/rank.ts rankHarvest), once it is made: --apply and `p` read it. */
  ranking?: import('./harvest/rank.js').Ranking;

  /** Arms whose verdict is in (they take no steer). */
  readonly settled = new Set<number>();

  /** Set when this is a resumed run: the HEAD its first life's arms started from, which the check must find again. */
  resumedHead?: string;

  /** Plans arms up to `total` (the arms a first life added from the board), before the run starts: no event. */
  planArms(total: number): void {
    while (this.armPhase && this.armCount() < Math.min(total, MAX_ARMS)) {
      this.phases.splice(this.afterArms(), 0, this.armPhase(this, this.armCount() + 1));
    }
  }

  /** Where one more arm goes: before the first phase that needs every arm in (the judge, else the harvest). */
  private afterArms(): number {
    const judge = this.phases.findIndex((p) => p.name === 'judge');
    return judge >= 0 ? judge : this.phases.findIndex((p) => p.name === 'harvest');
  }

  /** The workflow's phases, and the factory `addArm` builds one more arm's phase with. */
  plan(phases: Phase[], armPhase: ArmPhaseFactory): Phase[] {
    this.phases = phases;
    this.armPhase = armPhase;
    return phases;
  }

  modelOf(arm: number): string | undefined {
    const { models } = this.opts;
    return models.length > 0 ? models[(arm - 1) % models.length] : this.opts.builderModel;
  }

  armCount(): number {
    return this.phases.filter((p) => p.arm !== undefined).length;
  }

  /** `c`: one more arm cloned from the primer, before the harvest (up to 5). Returns a motif when refused. */
  addArm(): string | undefined {
    const count = this.armCount();
    const refused = this.harvested
      ? 'the harvest is done: no more arms'
      : !this.armPhase
        ? 'the batch is not planned yet: no arm to add'
        : count >= MAX_ARMS
          ? `already ${MAX_ARMS} arms: the most a batch takes`
          : undefined;
    // Refused as an event, as an accepted one is planned as one: the board's count of clones asked is right at once.
    if (refused) this.run.emit({ type: 'clone_refused', adwId: this.run.adwId, ts: Date.now(), motif: refused });
    if (refused || !this.armPhase) return refused;
    const phase = this.armPhase(this, count + 1);
    const at = this.afterArms();
    const before = this.phases[at]?.name ?? 'harvest';
    this.phases.splice(at, 0, phase);
    this.run.emit({ type: 'phase_planned', adwId: this.run.adwId, ts: Date.now(), phase: planOf(phase), before });
    return undefined;
  }

  /** `a`: abort the arm's running turn (RPC abort), or end its pause at the cap; the arm ends red, the batch goes on. */
  abortArm(arm: number): void {
    this.armAborts.get(arm)?.abort();
    this.gateAborts.get(arm)?.abort();
    this.pauses.get(arm)?.(undefined);
  }

  /** What an arm's gates run under once its turn ended: the user's interrupt or `a`, never a batch stop (it is judged on its work). */
  gateSignal(arm: number): AbortSignal {
    const own = new AbortController();
    this.gateAborts.set(arm, own);
    return AbortSignal.any([this.run.signal, own.signal]);
  }

  armSignal(arm: number): AbortSignal {
    const controller = new AbortController();
    this.armAborts.set(arm, controller);
    const runSignal = this.run.signal;
    if (runSignal.aborted) controller.abort();
    else if (this.batchStop) controller.abort(this.batchStop);
    else runSignal.addEventListener('abort', () => controller.abort(), { once: true });
    return controller.signal;
  }

  /** A live session on `sessionId` (the builder's route, tools, envelope) in the user's tree, or in `where.cwd` as a
   *  fork of the primer for a worktree arm (with the arm's model and env). */
  async open(
    sessionId: string,
    phase: string,
    where: {
      cwd?: string;
      model?: string;
      env?: NodeJS.ProcessEnv;
      fork?: SessionRequest['fork'];
      sandbox?: SessionRequest['sandbox'];
    } = {},
  ): Promise<AgentSession> {
    const { opts, run } = this;
    const card = await envelopeCard('BuildEnvelope');
    this.gate ??= import('./spend/budgetServer.js')
      .then((m) => m.startBudgetServer(this.spend))
      .catch((error: unknown) => {
        throw new InfrastructureError(`the run's spend gate could not listen on the loopback: ${errorMessage(error)}`);
      });
    const { BUDGET_URL_ENV } = await import('./spend/budgetServer.js');
    const env = { ...(where.env ?? opts.env ?? process.env), [BUDGET_URL_ENV]: (await this.gate).url };
    // One pi starts at a time: pi 1.6 waits 200 ms for its settings' lock and, missing it, goes on without them.
    const started = this.starts.then(() =>
      opts.harness.openSession({
        sessionId,
        cwd: where.cwd ?? opts.cwd,
        workspace: opts.workspace,
        model: where.model ?? opts.builderModel ?? this.modelOf(1),
        thinking: opts.thinking,
        tools: opts.tools ?? BON_TOOLS,
        env,
        identity: { adwId: run.adwId, phase, role: 'builder' },
        envelopeSchema: { title: card.title, schema: card.schema },
        limits: opts.limits,
        ...(where.fork ? { fork: where.fork } : {}),
        ...(where.sandbox ? { sandbox: where.sandbox } : {}),
      }),
    );
    this.starts = started.catch(() => undefined);
    try {
      return await started;
    } catch (error) {
      // A fork that is not what was asked is the arm's to report (red, zero tokens), not a batch failure.
      if (error instanceof HarnessError && error.evidence.kind === 'fork') throw error;
      // An arm's own pi that does not start makes that arm red (the others go on); the primer's stops the run.
      const motif = `pi could not start in RPC mode: ${errorMessage(error)}`;
      throw phase === 'prime' ? new InfrastructureError(motif) : new PhaseFailure(motif, undefined, 'crashed');
    }
  }

  /** How many arms work at once in the worktree mode: the flag, else every arm (at most what the machine bears). */
  concurrency(): number {
    return Math.max(1, this.opts.concurrency ?? Math.min(MAX_ARMS, Math.max(2, os.availableParallelism() * 2)));
  }

  /** The live session, reopened on the primer's session if an earlier arm's pi died. */
  async ensureRpc(): Promise<AgentSession> {
    if (this.rpc?.alive) return this.rpc;
    await this.rpc?.close();
    if (!this.primer.sessionId) throw new InfrastructureError('no primer session to clone from');
    this.rpc = await this.open(this.primer.sessionId, 'prime');
    return this.rpc;
  }

  /** Closes every live session, then removes every worktree of the run (each attempted, whatever the others do). */
  async close(): Promise<void> {
    const agents = [this.rpc, ...this.armAgents.values()];
    this.rpc = undefined;
    this.armAgents.clear();
    await Promise.all(agents.map((agent) => agent?.close().catch(() => undefined)));
    this.baseline.stop.abort(); // ended already at a harvest; else stopped, its tree released by itself
    await this.baseline.settled();
    const trees = [...this.trees.values()];
    this.trees.clear();
    await Promise.all(trees.map((tree) => tree.release().catch(() => undefined)));
    const gate = this.gate;
    this.gate = undefined;
    await gate?.then((g) => g.close()).catch(() => undefined);
  }

  markHarvested(): void {
    this.harvested = true;
    this.spend.dispose();
  }
}
