// One turn of a pi RPC process: from `prompt` to `agent_settled`. It owns the turn's fresh StreamReader, its
// guard (the same deadline, interrupt and watchdog as json mode) and the final judgement by json mode's verdict.
// Stopping a turn early (watchdog, deadline, the user's signal, close) is asked of the process through `onStop`
// (RPC `abort`); the reason recorded here then wins over whatever the aborted stream would say.
import { HarnessError, type FailureKind } from '../contract/errors.js';
import { SOCLE, type AgentAnswer, type TurnOptions } from '../contract/agent.js';
import { guardAttempt, idleMotif, type AttemptGuard } from './guards.js';
import { PI_MIN_VERSION } from './resolve.js';
import { isTurnEnd } from './rpcProtocol.js';
import { StreamReader, TurnObserver, type Inventory, type PiEvent } from './stream.js';
import { verdict } from './verdict.js';

export type PromptOptions = TurnOptions;

export type RpcTurnResult = AgentAnswer;

export interface TurnContext {
  sessionId: string;
  /** The inventory this session streamed on an earlier turn: a second prompt in one session carries none of its own. */
  inventory?: Inventory;
  requestedModel?: string;
  stderrTail: string;
}

export class RpcTurn {
  private readonly observer: TurnObserver;
  readonly reader: StreamReader;
  readonly settled: Promise<void>;
  /** Why the factory ended the turn early; undefined while it runs its course. */
  stopped?: { motif: string; kind: FailureKind };
  /** pi took the prompt without running the agent (`disposition: "handled"`). */
  handled = false;
  private readonly started = performance.now();
  private settle!: () => void;
  private reject!: (error: Error) => void;
  /** The shared deadline, interrupt and idle watchdog: any of them stops the turn. */
  private readonly guard: AttemptGuard;

  constructor(
    readonly opts: PromptOptions,
    private readonly onStop: (turn: RpcTurn) => void,
  ) {
    // A turn reports usage once an assistant message has cost something (the user message's own message_end
    // must not count as a turn on the board): the observer's rule, shared with json mode.
    this.observer = new TurnObserver(opts);
    this.reader = this.observer.reader;
    this.settled = new Promise<void>((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.guard = guardAttempt(
      {
        ...opts,
        abortMotif: 'aborted by the user',
        idle: { ms: opts.idleTimeoutMs, motif: idleMotif(opts.idleTimeoutMs, 'the turn') },
      },
      (motif, kind) => this.stop(motif, kind),
    );
  }

  /** One event of this turn (the raw line goes to the reader, exactly as json mode reads it). */
  take(line: string, event: PiEvent): void {
    if (!this.stopped) this.guard.progress();
    this.observer.take(line, event);
    if (isTurnEnd(event)) this.settle();
  }

  note(text: string): void {
    this.opts.onActivity?.({ kind: 'note', text });
  }

  /** Records why the turn is being ended and asks the process to abort it, once. */
  stop(motif: string, kind: FailureKind): void {
    if (this.stopped) return;
    this.stopped = { motif, kind };
    this.guard.disarm();
    this.onStop(this);
  }

  /**
   * pi answered the prompt with `disposition: "handled"`: no run starts and no `agent_settled` will come, so the
   * turn ends now (judged with what it streamed, usually nothing: the verdict then says so).
   */
  handledWithoutRun(): void {
    this.handled = true;
    this.settle();
  }

  /** The process died: the turn can never settle. */
  fail(error: Error): void {
    this.reject(error);
  }

  dispose(): void {
    this.guard.disarm();
  }

  /** Tokens and cost so far, with the stderr tail: the evidence every HarnessError of this turn carries. */
  evidence(stderrTail: string): { tokens: number; cost: number; stderrTail: string } {
    const { tokens, cost } = this.reader.summary;
    return { tokens, cost, stderrTail };
  }

  /** The error a turn that did not settle normally ends with: the stop reason first, else the cause. */
  failure(cause: unknown, ctx: TurnContext): unknown {
    const evidence = this.evidence(ctx.stderrTail);
    if (this.stopped)
      return new HarnessError(this.stopped.motif, ctx.sessionId, { ...evidence, kind: this.stopped.kind });
    if (cause instanceof HarnessError)
      return new HarnessError(cause.message, ctx.sessionId, { ...evidence, kind: cause.evidence.kind });
    return cause;
  }

  /** The settled turn judged by the json mode's verdict; tokens and cost are this turn's own usage. */
  judge(ctx: TurnContext): RpcTurnResult {
    const summary = this.reader.summary;
    const evidence = this.evidence(ctx.stderrTail);
    if (this.stopped)
      throw new HarnessError(this.stopped.motif, ctx.sessionId, { ...evidence, kind: this.stopped.kind });
    if (this.handled && summary.envelope === undefined && summary.text.trim() === '') {
      throw new HarnessError(
        'pi handled the prompt without running the agent (an extension or a command took it): no answer',
        ctx.sessionId,
        {
          ...evidence,
          kind: 'handled',
        },
      );
    }
    const judged = verdict(
      { ...summary, inventory: summary.inventory ?? ctx.inventory },
      {
        exitCode: null, // the process lives on: only the stream speaks
        requestedModel: this.opts.requestedModel ?? ctx.requestedModel,
        expectedSocle: [...SOCLE],
        stderrTail: ctx.stderrTail,
        minVersion: PI_MIN_VERSION,
      },
    );
    if (!judged.ok) throw new HarnessError(judged.motif, ctx.sessionId, { ...evidence, kind: judged.kind });
    return {
      sessionId: ctx.sessionId,
      payload: judged.source === 'gate' ? judged.envelope : judged.text,
      source: judged.source,
      tokens: summary.tokens,
      cost: summary.cost,
      model: summary.model,
      seconds: (performance.now() - this.started) / 1000,
      calls: summary.calls,
    };
  }
}
