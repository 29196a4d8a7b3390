// The factory's own client for a long-lived `pi --mode rpc` process (best-of-N: one primer, N clones). As the json
// mode: the session is declared in the ledger before pi starts, the process is supervised (own group, kill ladder),
// stdout is drained and split on LF only, a turn is judged by the same StreamReader + verdict, and every failure is
// a HarnessError naming the session. stderr goes to a file (an unread pipe would stall pi), its tail kept in memory.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HarnessError, firstLine } from '../contract/errors.js';
import { declareSession } from '../trace/ledger.js';
import type { SupervisedChild } from '../process/supervisor.js';
import { launchPi, StderrTail } from './launch.js';
import { LineSplitter } from './lines.js';
import type { PiRpcOptions } from './rpcOptions.js';
import { diagnoseStartFailure } from './resolve.js';
import { missingKeyMotif, missingKeyProvider } from './providerKeys.js';
import {
  classifyLine,
  encodeCommand,
  parseSessionStats,
  parseState,
  PendingCommands,
  promptDisposition,
  stderrSummary,
  RpcCommandError,
  uiRefusal,
  type RpcSessionStats,
  type RpcState,
  type UiRequest,
} from './rpcProtocol.js';
import type { Inventory } from './stream.js';
import { RpcTurn, type PromptOptions, type RpcTurnResult } from './rpcTurn.js';

export type { PromptOptions, RpcTurnResult } from './rpcTurn.js';

const OPEN_TIMEOUT_MS = 30_000;
const COMMAND_TIMEOUT_MS = 15_000;
/** After `abort` is answered, how long a turn may still take to reach agent_settled before pi is killed. */
const SETTLE_GRACE_MS = 5_000;
/** close(): how long pi gets to exit on stdin EOF before the kill ladder. */
const EOF_EXIT_MS = 3_000;

export type { PiRpcOptions } from './rpcOptions.js';

/** A pause that never keeps the process alive. */
const delay = (ms: number): Promise<void> => sleep(ms, undefined, { ref: false });

export class PiRpc {
  /** Dialogs pi opened and the client refused: the request, its session, when. */
  readonly uiRefusals: Array<UiRequest & { sessionId: string; at: string }> = [];
  readonly stderrFile: string;
  private readonly pending = new PendingCommands('factory');
  private readonly splitter = new LineSplitter();
  private readonly stderrTail = new StderrTail();
  private readonly stderrFd: number;
  private turn?: RpcTurn;
  private exit?: { code: number | null; signal: NodeJS.Signals | null };
  private closing?: Promise<void>;
  /**
   * The socle's inventory of each session, as its own turns streamed it (deposited once per session start — a
   * clone is one — not per prompt). An arm's verdict rests on its own session's, never on the process's last.
   */
  private readonly inventories = new Map<string, Inventory>();
  private noiseLines = 0;
  private readonly exitHandled: Promise<void>;

  private constructor(
    private readonly opts: PiRpcOptions,
    private readonly proc: SupervisedChild,
    private readonly cwd: string,
    private current: { sessionId: string; model?: string },
    stderrFile: string,
  ) {
    this.stderrFile = stderrFile;
    this.stderrFd = fs.openSync(stderrFile, 'a');
    proc.child.stdout.on('data', (chunk: Buffer) => this.onLines(this.splitter.push(chunk)));
    proc.child.stdout.on('end', () => this.onLines(this.splitter.end()));
    proc.child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderrTail.push(text);
      try {
        fs.writeSync(this.stderrFd, chunk);
      } catch {
        // the log is evidence, not a duty: a full disk must not kill the arm
      }
    });
    // A write to a dead pi fails with EPIPE; its death is reported by the exit handler below.
    proc.child.stdin.on('error', () => {});
    proc.child.on('error', () => {});
    // 'exit' can come before stdout is drained: let the last lines (agent_settled…) arrive first, bounded,
    // because a tool's grandchild may hold the pipe open.
    const stdoutClosed = new Promise<void>((resolve) => proc.child.stdout.once('close', () => resolve()));
    this.exitHandled = proc.exited.then(async (exit) => {
      await Promise.race([stdoutClosed, delay(500)]);
      this.onExit(exit);
    });
  }

  /**
   * Launches `pi --mode rpc` by the one launch step (resume check, schema, ledger, node env — the json mode's, as
   * is: the RPC process is one node with one identity — spawn) and waits until it answers `get_state`.
   */
  static async open(opts: PiRpcOptions): Promise<PiRpc> {
    const paths = opts.workspace;
    const cwd = path.resolve(opts.cwd);
    const sessionId = opts.flags.sessionId;
    const proc = launchPi({ ...opts, mode: 'rpc', cwd });
    fs.mkdirSync(paths.sessionsDir, { recursive: true });
    const stderrFile = path.join(paths.sessionsDir, `${sessionId}.stderr.log`);
    const rpc = new PiRpc(opts, proc, cwd, { sessionId, model: opts.flags.model }, stderrFile);
    try {
      const state = await rpc.getState(opts.openTimeoutMs ?? OPEN_TIMEOUT_MS);
      if (state.sessionId !== sessionId) {
        throw new HarnessError(`pi opened session ${state.sessionId}, not the declared ${sessionId}`, sessionId, {
          kind: 'spawn',
        });
      }
      const refused = opts.verifyOpen?.(state);
      if (refused) throw new HarnessError(refused, sessionId, { kind: 'fork' });
      return rpc;
    } catch (error) {
      await rpc.close();
      if (error instanceof HarnessError && (error.evidence.kind === 'spawn' || error.evidence.kind === 'fork'))
        throw error;
      // Died while starting (old Node, a broken extension, a bad flag) or never answered: why first, then the command.
      const why = diagnoseStartFailure(rpc.stderrTail.text) ?? (error instanceof Error ? error.message : String(error));
      throw new HarnessError(`pi did not start in rpc mode: ${why} (${opts.pi.display})`, sessionId, {
        kind: 'spawn',
        stderrTail: rpc.stderrTail.text,
      });
    }
  }

  get sessionId(): string {
    return this.current.sessionId;
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** The route set by the flags or the last `setModel`. */
  get model(): string | undefined {
    return this.current.model;
  }

  get busy(): boolean {
    return this.turn !== undefined;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** stdout lines that were not JSON objects with a type (pi writes none; a count, never fatal). */
  get noise(): number {
    return this.noiseLines;
  }

  /** Responses whose id matched no waiting command (late after a timeout). */
  get unmatchedResponses(): number {
    return this.pending.unmatched;
  }

  /** One command, correlated by id; resolves with the response's `data`, rejects on refusal, timeout or exit. */
  async command(type: string, fields: Record<string, unknown> = {}, timeoutMs = COMMAND_TIMEOUT_MS): Promise<unknown> {
    const id = this.pending.nextId();
    const answer = this.pending.register(id, type, timeoutMs);
    if (this.exit === undefined) this.proc.child.stdin.write(encodeCommand(id, type, fields));
    try {
      return await answer;
    } catch (error) {
      if (error instanceof HarnessError) throw error;
      const kind = error instanceof RpcCommandError ? 'refused' : 'timeout';
      throw new HarnessError((error as Error).message, this.sessionId, { kind, stderrTail: this.stderrTail.text });
    }
  }

  async getState(timeoutMs = COMMAND_TIMEOUT_MS): Promise<RpcState> {
    return parseState(await this.command('get_state', {}, timeoutMs));
  }

  async getSessionStats(): Promise<RpcSessionStats> {
    return parseSessionStats(await this.command('get_session_stats'));
  }

  async setModel(provider: string, modelId: string): Promise<void> {
    try {
      await this.command('set_model', { provider, modelId });
    } catch (error) {
      if (error instanceof HarnessError && error.evidence.kind === 'refused') {
        throw new HarnessError(`model not found: ${provider}/${modelId}`, this.sessionId, { kind: 'model' });
      }
      throw error;
    }
    this.current.model = `${provider}/${modelId}`;
  }

  async setThinkingLevel(level: string): Promise<void> {
    await this.command('set_thinking_level', { level });
  }

  /**
   * A new session holding the current one's branch (the primer), made current. Declared in the ledger with
   * reason `clone` as soon as pi names it; refused when the copy does not hold every message of the primer.
   */
  async clone(opts: { phase?: string; model?: string } = {}): Promise<{ sessionId: string; sessionFile: string }> {
    const before = await this.getState();
    const data = (await this.command('clone')) as { cancelled?: boolean } | undefined;
    if (data?.cancelled) throw new HarnessError('clone cancelled by an extension', this.sessionId, { kind: 'clone' });
    const after = await this.getState();
    if (after.sessionId === before.sessionId || !after.sessionFile) {
      throw new HarnessError(`clone did not open a new session (still ${after.sessionId})`, this.sessionId, {
        kind: 'clone',
      });
    }
    declareSession(this.opts.workspace.ledgerFile, {
      sessionId: after.sessionId,
      cwd: this.cwd,
      // The clone's own model: the one it is about to run on, else what pi says it holds (never the last arm's).
      model: opts.model ?? after.model ?? this.current.model,
      phase: opts.phase ?? this.opts.identity.phase,
      adwId: this.opts.identity.adwId,
      reason: 'clone',
    });
    this.current.sessionId = after.sessionId;
    if (after.messageCount !== before.messageCount) {
      throw new HarnessError(
        `clone ${after.sessionId} holds ${after.messageCount} messages, the primer ${before.messageCount}`,
        after.sessionId,
        { kind: 'clone' },
      );
    }
    return { sessionId: after.sessionId, sessionFile: after.sessionFile };
  }

  /** Opens another session file (e.g. back to the primer before the next clone). */
  async switchSession(sessionPath: string): Promise<RpcState> {
    const data = (await this.command('switch_session', { sessionPath })) as { cancelled?: boolean } | undefined;
    if (data?.cancelled)
      throw new HarnessError(`switch to ${sessionPath} cancelled by an extension`, this.sessionId, { kind: 'switch' });
    const state = await this.getState();
    this.current.sessionId = state.sessionId;
    // The model is what pi says the session it switched to runs on, not the one this client last set.
    if (state.model) this.current.model = state.model;
    return state;
  }

  /** Aborts the running turn (it then ends `aborted`), or sends a bare `abort` when idle. */
  async abort(motif = 'aborted by the user'): Promise<void> {
    const turn = this.turn;
    if (turn) {
      turn.stop(motif, 'aborted');
      await turn.settled.catch(() => {});
      return;
    }
    if (this.exit === undefined) await this.command('abort');
  }

  /** One prompt in the current session, its events collected until `agent_settled` (or a "handled" answer), then judged. */
  async prompt(message: string, opts: PromptOptions): Promise<RpcTurnResult> {
    const sessionId = this.sessionId;
    if (this.turn) throw new HarnessError('a turn is already running in this pi process', sessionId, { kind: 'busy' });
    if (this.exit !== undefined || this.closing) throw this.deadError('pi is not running');
    if (opts.signal?.aborted)
      throw new HarnessError('interrupted before the prompt was sent', sessionId, { kind: 'aborted' });

    const turn = new RpcTurn(opts, (t) => this.abortStuck(t));
    this.turn = turn;
    // pi ≥ 0.99 may take the prompt without a run (`disposition: "handled"`): no agent_settled would ever come.
    const accepted = this.command('prompt', { message }, opts.timeoutMs).then((data) => {
      if (promptDisposition(data) === 'handled') turn.handledWithoutRun();
    });
    try {
      await Promise.all([accepted, turn.settled]);
    } catch (error) {
      if (error instanceof HarnessError && error.evidence.kind === 'refused') {
        // pi refused the prompt before accepting it: no turn will come. No key is the installation's (exit 2).
        const keyless = missingKeyProvider(error.message);
        if (keyless) throw new HarnessError(missingKeyMotif(keyless), sessionId, { kind: 'auth' });
        throw new HarnessError(`prompt refused by pi: ${firstLine(error.message)}`, sessionId, { kind: 'refused' });
      }
      throw turn.failure(error, this.turnContext(sessionId));
    } finally {
      turn.dispose();
      if (this.turn === turn) this.turn = undefined;
      // Kept even from a failed turn: the next prompt in this session will carry no inventory of its own.
      const inventory = turn.reader.summary.inventory;
      if (inventory) this.inventories.set(sessionId, inventory);
    }
    return turn.judge(this.turnContext(sessionId));
  }

  /**
   * Ends the process: a running turn is aborted and awaited first (EOF mid-turn would lose it), then stdin
   * is closed (pi shuts the session down and exits), then the kill ladder. Idempotent, safe in a finally.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const turn = this.turn;
      if (turn && this.exit === undefined) {
        turn.stop('pi closed while the turn was running', 'aborted');
        await Promise.race([turn.settled.catch(() => {}), delay(COMMAND_TIMEOUT_MS + SETTLE_GRACE_MS)]);
      }
      if (this.exit === undefined) {
        this.proc.child.stdin.end();
        await Promise.race([this.proc.exited, delay(EOF_EXIT_MS)]);
      }
      await this.proc.kill();
      await this.exitHandled; // every waiter rejected, `alive` false, before close() returns
      try {
        fs.closeSync(this.stderrFd);
      } catch {
        // already closed
      }
    })();
    return this.closing;
  }

  /** Ends every process pi's tools started that is still running (background and setsid jobs); pi stays. */
  endToolProcesses(): Promise<number[]> {
    return this.proc.endStrays();
  }

  private turnContext(sessionId: string) {
    return {
      sessionId,
      inventory: this.inventories.get(sessionId),
      requestedModel: this.current.model,
      stderrTail: this.stderrTail.text,
    };
  }

  /** RPC `abort`; agent_settled then ends the turn. A pi that does not settle is killed (the turn rejects). */
  private abortStuck(turn: RpcTurn): void {
    const killIfStuck = () => {
      if (this.turn === turn) void this.proc.kill();
    };
    this.command('abort', {}, COMMAND_TIMEOUT_MS).then(
      () => setTimeout(killIfStuck, SETTLE_GRACE_MS).unref(),
      killIfStuck,
    );
  }

  private onLines(lines: string[]): void {
    for (const line of lines) {
      if (line.length === 0) continue;
      const classified = classifyLine(line);
      switch (classified.kind) {
        case 'response':
          this.pending.settle(classified.response);
          break;
        case 'ui_request':
          this.onUiRequest(classified.request, classified.dialog);
          break;
        case 'event':
          this.turn?.take(line, classified.event); // between turns (a clone's session_start…) nothing is judged
          break;
        case 'noise':
          this.noiseLines += 1;
          break;
      }
    }
  }

  private onUiRequest(request: UiRequest, dialog: boolean): void {
    if (!dialog) {
      if (request.method === 'notify' && request.message) this.turn?.note(request.message);
      return;
    }
    if (this.exit === undefined) this.proc.child.stdin.write(uiRefusal(request.id));
    this.uiRefusals.push({ ...request, sessionId: this.sessionId, at: new Date().toISOString() });
    const what = [request.title, request.message].filter(Boolean).join(': ').split('\n')[0] ?? '';
    this.turn?.note(`refused ${request.method} dialog${what ? ` (${what})` : ''}`);
  }

  private deadError(prefix: string): HarnessError {
    const how = this.exit
      ? this.exit.signal
        ? `killed by ${this.exit.signal}`
        : `exited with code ${this.exit.code}`
      : 'closing';
    return new HarnessError(`${prefix} (pi ${how}): ${stderrSummary(this.stderrTail.text)}`, this.sessionId, {
      kind: 'crashed',
      stderrTail: this.stderrTail.text,
    });
  }

  private onExit(exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    this.exit = exit;
    this.onLines(this.splitter.end());
    const error = this.deadError(this.turn ? 'pi died mid-turn' : 'pi exited');
    this.pending.rejectAll(error);
    this.turn?.fail(error);
  }
}
