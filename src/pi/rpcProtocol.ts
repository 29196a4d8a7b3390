// The pure half of the pi RPC client: how a command is written, how a line from pi's stdout is classified,
// and how responses are matched to the commands that wait for them. No process here, so every rule can be
// tested dry. Framing itself (LF only, a trailing CR stripped, U+2028/U+2029 left alone) is LineSplitter's.

import type { PiEvent } from './stream.js';
import { FactoryError } from '../contract/errors.js';

/** Dialog methods block the extension until an answer arrives; the factory answers "cancelled" at once. */
export const DIALOG_METHODS = new Set(['select', 'confirm', 'input', 'editor']);

export interface RpcResponse {
  id?: string;
  command: string;
  success: boolean;
  data?: unknown;
  error?: string;
}

export interface UiRequest {
  id: string;
  method: string;
  title?: string;
  message?: string;
}

export type RpcLine =
  | { kind: 'response'; response: RpcResponse }
  | { kind: 'ui_request'; request: UiRequest; dialog: boolean }
  | { kind: 'event'; event: PiEvent }
  /** Not a JSON object with a string `type`: counted by the caller, never fatal. */
  | { kind: 'noise' };

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Classifies one complete stdout line. The raw line is kept out of the result: events can be megabytes. */
export function classifyLine(line: string): RpcLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'noise' };
  }
  if (!isObj(value) || typeof value.type !== 'string') return { kind: 'noise' };
  if (value.type === 'response') {
    return {
      kind: 'response',
      response: {
        id: str(value.id),
        command: str(value.command) ?? '?',
        success: value.success === true,
        data: value.data,
        error: str(value.error),
      },
    };
  }
  if (value.type === 'extension_ui_request' && typeof value.id === 'string') {
    const method = str(value.method) ?? '?';
    return {
      kind: 'ui_request',
      request: { id: value.id, method, title: str(value.title), message: str(value.message) },
      dialog: DIALOG_METHODS.has(method),
    };
  }
  return { kind: 'event', event: value as PiEvent };
}

/**
 * One JSON line for pi's stdin. U+2028/U+2029 are escaped although JSON allows them raw: the escape is the
 * same string once parsed, and no reader on the other side can mistake it for a line break.
 */
export function encodeLine(message: Obj): string {
  return `${JSON.stringify(message)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')}\n`;
}

export function encodeCommand(id: string, type: string, fields: Obj = {}): string {
  return encodeLine({ ...fields, id, type });
}

/** The last lines of pi's stderr on one line, bounded: the evidence of a death or a failed start. */
export function stderrSummary(text: string, n = 3): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length === 0 ? 'no stderr' : lines.slice(-n).join(' | ').slice(0, 300);
}

/** The answer to a dialog when no human is there: cancelled (damage-control reads it as a refusal). */
export function uiRefusal(id: string): string {
  return encodeLine({ type: 'extension_ui_response', id, cancelled: true });
}

/** A command pi refused (`success: false`), with pi's own words. */
export class RpcCommandError extends FactoryError {
  override readonly name = 'RpcCommandError';
  constructor(
    readonly command: string,
    readonly piError: string,
  ) {
    super(`pi refused ${command}: ${piError}`, 'refused');
  }
}

export class RpcTimeoutError extends FactoryError {
  override readonly name = 'RpcTimeoutError';
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`pi did not answer ${command} within ${Math.round(timeoutMs / 100) / 10} s`, 'stalled');
  }
}

interface Pending {
  command: string;
  resolve(data: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Commands in flight, keyed by id. A response resolves (success) or rejects (refusal) its command; a
 * response whose id is unknown (late after a timeout, or not ours) is counted and dropped. `rejectAll`
 * ends every waiter at once — used when pi exits, so nothing waits for an answer that cannot come.
 */
export class PendingCommands {
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private unmatchedCount = 0;
  private closedWith?: Error;

  constructor(private readonly prefix = 'factory') {}

  get size(): number {
    return this.pending.size;
  }

  /** Responses that matched no waiting command. */
  get unmatched(): number {
    return this.unmatchedCount;
  }

  nextId(): string {
    this.next += 1;
    return `${this.prefix}-${this.next}`;
  }

  /** Registers a command; the promise settles on its response, its timeout, or `rejectAll`. */
  register(id: string, command: string, timeoutMs: number): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.pending.has(id)) return Promise.reject(new Error(`duplicate rpc id ${id}`));
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcTimeoutError(command, timeoutMs));
      }, timeoutMs);
      timer.unref?.();
      this.pending.set(id, { command, resolve, reject, timer });
    });
  }

  /** Settles the command this response answers; false when no command waits for its id. */
  settle(response: RpcResponse): boolean {
    const waiting = response.id === undefined ? undefined : this.pending.get(response.id);
    if (!waiting || response.id === undefined) {
      this.unmatchedCount += 1;
      return false;
    }
    this.pending.delete(response.id);
    clearTimeout(waiting.timer);
    if (response.success) waiting.resolve(response.data);
    else waiting.reject(new RpcCommandError(waiting.command, response.error ?? 'no reason given'));
    return true;
  }

  /** Rejects every waiting command now, and every later one at once (the process is gone). */
  rejectAll(error: Error): void {
    this.closedWith = error;
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const waiting of all) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
  }
}

/** The end of a turn in RPC mode: after it pi is idle and a new prompt is accepted. */
export function isTurnEnd(event: PiEvent): boolean {
  return event.type === 'agent_settled';
}

/**
 * What pi did with an accepted `prompt`/`steer`/`follow_up` (pi ≥ 0.99: `data.disposition`): `started` a run,
 * `queued` it, or `handled` it without a run (an extension or a command took the input) — then no
 * `agent_settled` will come. undefined when pi does not say (0.85: a run always starts).
 */
export type PromptDisposition = 'started' | 'queued' | 'handled';

export function promptDisposition(data: unknown): PromptDisposition | undefined {
  const disposition = isObj(data) ? data.disposition : undefined;
  return disposition === 'started' || disposition === 'queued' || disposition === 'handled' ? disposition : undefined;
}

export interface RpcState {
  sessionId: string;
  sessionFile?: string;
  messageCount: number;
  isStreaming: boolean;
  /** `provider/id` of the current model, when pi reports one (pi ≥ 0.99 omits the field when none is selected; 0.85 sent null). */
  model?: string;
  thinkingLevel?: string;
}

/** Reads `get_state` data defensively: a missing session id is the only fatal gap. */
export function parseState(data: unknown): RpcState {
  const d = isObj(data) ? data : {};
  const sessionId = str(d.sessionId);
  if (!sessionId) throw new Error('get_state answered without a sessionId');
  const model =
    isObj(d.model) && typeof d.model.provider === 'string' && typeof d.model.id === 'string'
      ? `${d.model.provider}/${d.model.id}`
      : undefined;
  return {
    sessionId,
    sessionFile: str(d.sessionFile),
    messageCount: typeof d.messageCount === 'number' ? d.messageCount : 0,
    isStreaming: d.isStreaming === true,
    model,
    thinkingLevel: str(d.thinkingLevel),
  };
}

export interface RpcSessionStats {
  sessionId?: string;
  sessionFile?: string;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  cost: number;
  contextUsage?: { tokens: number | null; contextWindow: number; percent: number | null };
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function parseSessionStats(data: unknown): RpcSessionStats {
  const d = isObj(data) ? data : {};
  const t = isObj(d.tokens) ? d.tokens : {};
  const usage = isObj(d.contextUsage) ? d.contextUsage : undefined;
  return {
    sessionId: str(d.sessionId),
    sessionFile: str(d.sessionFile),
    tokens: {
      input: num(t.input),
      output: num(t.output),
      cacheRead: num(t.cacheRead),
      cacheWrite: num(t.cacheWrite),
      total: num(t.total),
    },
    cost: num(d.cost),
    contextUsage: usage
      ? {
          tokens: typeof usage.tokens === 'number' ? usage.tokens : null,
          contextWindow: num(usage.contextWindow),
          percent: typeof usage.percent === 'number' ? usage.percent : null,
        }
      : undefined,
  };
}
