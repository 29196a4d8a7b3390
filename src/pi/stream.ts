// Reader of pi's JSON event stream (`pi -p --mode json`, and the turns of `pi --mode rpc`).
// Pure: it is fed lines and keeps the figures the verdict and the cockpit need, so it can be tested dry
// on captured streams. A line that is not a JSON event is counted and skipped, never fatal.

import { clip, LINE_BREAK } from '../contract/errors.js';
import type { Activity } from '../contract/events.js';
import { REPORT_TOOL } from '../contract/typedGate.js';
import { addCosts, addCounts } from '../contract/numbers.js';
import { USAGE_ENTRY } from '../../.pi/lib/usage-entry.js';
import type { CallUsage } from '../contract/agent.js';

/** One parsed event of the stream; only `type` is trusted, every other field is read defensively. */
export type PiEvent = { type: string } & Record<string, unknown>;

export interface Inventory {
  pi_version: string;
  present: string[];
  missing: string[];
}

export interface StreamSummary {
  /** Last non-empty text of an assistant `message_end`. */
  text: string;
  tokens: number;
  /** USD, rounded to 1e-9 so float artefacts never reach a display or a comparison. */
  cost: number;
  stopReason?: string;
  errorMessage?: string;
  /** First observed `provider/model` of an assistant message. */
  model?: string;
  /** `result.details` of the last successful `report_phase` call. */
  envelope?: Record<string, unknown>;
  /** Error texts of `report_phase` calls pi or the extension refused. */
  gateErrors: string[];
  inventory?: Inventory;
  /** Why factory-guard stopped the agent (its `factory-guard` entry), when it tripped. */
  guardTrip?: string;
  sessionId?: string;
  turns: number;
  toolCalls: number;
  /** `auto_retry_start` events (pi's own provider retries). */
  retries: number;
  /** `agent_settled.aborted` (pi ≥ 1.1): the run was aborted; undefined when pi does not say (0.85). */
  settledAborted?: boolean;
  lines: number;
  nonJson: number;
  /** Each model call's usage, in order (the spend forecast reads a primer's; at most MAX_CALLS kept). */
  calls: CallUsage[];
}

const MAX_CALLS = 1000;

export const INVENTORY_CUSTOM_TYPE = 'factory-inventory';

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Concatenated text blocks of a message or tool result (`content` is a string or an array of blocks). */
export function textOf(holder: unknown): string {
  if (!isObj(holder)) return '';
  const content = holder.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content)
    if (isObj(part) && part.type === 'text' && typeof part.text === 'string') out += part.text;
  return out;
}

/** Tolerant inventory reader: the entry's `data` (custom entry) or `details` (custom message). */
export const GUARD_CUSTOM_TYPE = 'factory-guard';

function guardTripOf(event: Obj): string | undefined {
  const entry = isObj(event.entry) ? event.entry : undefined;
  if (!entry || entry.customType !== GUARD_CUSTOM_TYPE || !isObj(entry.data)) return undefined;
  return str(entry.data.reason);
}

function inventoryOf(event: Obj): Inventory | undefined {
  const entry = isObj(event.entry) ? event.entry : event;
  if (entry.customType !== INVENTORY_CUSTOM_TYPE) return undefined;
  const data = isObj(entry.data) ? entry.data : isObj(entry.details) ? entry.details : undefined;
  if (!data) return undefined;
  return { pi_version: str(data.pi_version) ?? '', present: strings(data.present), missing: strings(data.missing) };
}

export class StreamReader {
  private text = '';
  private tokens = 0;
  private cost = 0;
  private stopReason?: string;
  private errorMessage?: string;
  private model?: string;
  private envelope?: Record<string, unknown>;
  private readonly gateErrors: string[] = [];
  private inventory?: Inventory;
  private guardTrip?: string;
  private sessionId?: string;
  private turns = 0;
  private toolCalls = 0;
  private retries = 0;
  private settledAborted?: boolean;
  private lines = 0;
  private nonJson = 0;
  private readonly calls: CallUsage[] = [];

  /** Reads one line; returns the event, or undefined for a line that is not a JSON event. */
  feed(line: string): PiEvent | undefined {
    // Cheap blank check first: trimming a multi-megabyte line just to learn it is not blank costs a copy.
    if (line.length === 0 || (line.charCodeAt(0) <= 0x20 && line.trim() === '')) return undefined;
    this.lines++;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.nonJson++;
      return undefined;
    }
    if (!isObj(value) || typeof value.type !== 'string') {
      this.nonJson++;
      return undefined;
    }
    const event = value as PiEvent;
    this.observe(event);
    return event;
  }

  get summary(): StreamSummary {
    return {
      text: this.text,
      tokens: this.tokens,
      cost: Math.round(this.cost * 1e9) / 1e9,
      stopReason: this.stopReason,
      errorMessage: this.errorMessage,
      model: this.model,
      envelope: this.envelope,
      gateErrors: [...this.gateErrors],
      inventory: this.inventory,
      guardTrip: this.guardTrip,
      sessionId: this.sessionId,
      turns: this.turns,
      toolCalls: this.toolCalls,
      retries: this.retries,
      settledAborted: this.settledAborted,
      lines: this.lines,
      nonJson: this.nonJson,
      calls: [...this.calls],
    };
  }

  private observe(event: PiEvent): void {
    switch (event.type) {
      case 'session':
        this.sessionId = str(event.id) ?? this.sessionId;
        break;
      case 'turn_start':
        this.turns++;
        break;
      case 'message_end':
        // Only the assistant's messages carry the answer, its usage and its model: the user's, tool results,
        // custom messages and pi ≥ 0.86's leading `role: "system"` message never count.
        if (isObj(event.message) && event.message.role === 'assistant') this.assistantMessage(event.message);
        break;
      case 'agent_settled':
        if (typeof event.aborted === 'boolean') this.settledAborted = event.aborted;
        break;
      case 'tool_execution_start':
        this.toolCalls++;
        break;
      case 'tool_execution_end':
        if (event.toolName === REPORT_TOOL) this.gateResult(event);
        break;
      case 'entry_appended':
        this.inventory = inventoryOf(event) ?? this.inventory;
        this.guardTrip = guardTripOf(event) ?? this.guardTrip;
        this.ownCall(event);
        break;
      case 'auto_retry_start':
        this.retries++;
        break;
    }
  }

  /** A model call a factory extension made itself (the compaction narrator): counted like a turn's. */
  private ownCall(event: Obj): void {
    const entry = isObj(event.entry) ? event.entry : undefined;
    if (!entry || entry.customType !== USAGE_ENTRY || !isObj(entry.data)) return;
    const data = entry.data;
    if (addCounts(0, data.tokens) === 0 && addCosts(0, data.cost) === 0) return; // nothing readable: no call
    this.tokens = addCounts(this.tokens, data.tokens);
    this.cost = addCosts(this.cost, data.cost);
    if (this.calls.length < MAX_CALLS) {
      this.calls.push({
        input: addCounts(0, data.input),
        output: addCounts(0, data.output),
        cacheRead: addCounts(0, data.cacheRead),
        cacheWrite: addCounts(0, data.cacheWrite),
        cost: addCosts(0, data.cost),
      });
    }
  }

  private assistantMessage(message: Obj): void {
    const text = textOf(message);
    if (text.trim() !== '') this.text = text;
    const usage = isObj(message.usage) ? message.usage : {};
    // Clamped sums: a negative, NaN or overflowing figure from the stream must not shrink or poison the total.
    this.tokens = addCounts(this.tokens, usage.totalTokens);
    this.cost = addCosts(this.cost, isObj(usage.cost) ? usage.cost.total : undefined);
    if (this.calls.length < MAX_CALLS && (usage.input !== undefined || usage.output !== undefined)) {
      this.calls.push({
        input: addCounts(0, usage.input),
        output: addCounts(0, usage.output),
        cacheRead: addCounts(0, usage.cacheRead),
        cacheWrite: addCounts(0, usage.cacheWrite),
        cost: addCosts(0, isObj(usage.cost) ? usage.cost.total : undefined),
      });
    }
    this.stopReason = str(message.stopReason) ?? this.stopReason;
    // The error belongs to the message that carries it: a later successful message (after pi's own
    // retry) clears it, so a stale error never becomes the evidence of a green turn.
    this.errorMessage = str(message.errorMessage);
    if (this.model === undefined && typeof message.model === 'string' && message.model !== '') {
      this.model =
        typeof message.provider === 'string' && message.provider !== ''
          ? `${message.provider}/${message.model}`
          : message.model;
    }
  }

  private gateResult(event: PiEvent): void {
    const result = isObj(event.result) ? event.result : {};
    if (event.isError === true) {
      this.gateErrors.push(textOf(result) || 'report_phase call refused');
    } else if (isObj(result.details)) {
      this.envelope = result.details;
    }
  }
}

/** Reads a whole stream of lines (a captured file, an RPC turn). */
export function readStream(lines: Iterable<string>): StreamSummary {
  const reader = new StreamReader();
  for (const line of lines) reader.feed(line);
  return reader.summary;
}

// ---------- live activity ----------

const DETAIL_MAX = 100;

/**
 * One display line: whitespace collapsed, truncated with an ellipsis (in code points). `\s` covers every line
 * break but NEL (U+0085), which is added so that no line break of any kind reaches the cockpit.
 */
function flatDetail(text: string, max = DETAIL_MAX): string {
  const flat = text.replace(/[\s\u0085]+/gu, ' ').trim();
  return clip(flat, max);
}

/** The first non-blank line, a line ending at any Unicode line break, not only LF. */
function firstDetail(text: string, max = DETAIL_MAX): string {
  const line = text.split(LINE_BREAK).find((l) => l.trim() !== '') ?? '';
  return flatDetail(line, max);
}

/** The most telling argument of a tool call: the bash command, the path, the pattern… */
export function argsDetail(args: unknown): string {
  if (!isObj(args)) return typeof args === 'string' ? flatDetail(args) : '';
  for (const key of ['command', 'pattern', 'path', 'file_path', 'status']) {
    const value = args[key];
    if (typeof value === 'string' && value !== '') return flatDetail(value);
  }
  try {
    return flatDetail(JSON.stringify(args));
  } catch {
    return '';
  }
}

/** The tool's name as one line: it comes from the model's tool call, so it may hold anything. */
function toolName(event: PiEvent): string {
  const name = str(event.toolName);
  return name === undefined ? '?' : flatDetail(name);
}

/** pi's id of a tool call (it pairs a call's end with its start when calls run at once), when it is a short string. */
function callIdOf(event: PiEvent): { callId?: string } {
  const id = str(event.toolCallId);
  return id !== undefined && id.length <= 200 ? { callId: id } : {};
}

/** Maps a stream event to a line of live activity for the cockpit; undefined for the rest. */
export function toActivity(event: PiEvent): Activity | undefined {
  switch (event.type) {
    case 'tool_execution_start':
      return { kind: 'tool_start', tool: toolName(event), detail: argsDetail(event.args), ...callIdOf(event) };
    case 'tool_execution_end': {
      const output = textOf(event.result);
      // A write the OS sandbox refused (a read-only file system there): the arm's own act, named on its row.
      const denied = output.split(LINE_BREAK).find((l) => /Read-only file system|\bEROFS\b/.test(l));
      return {
        kind: 'tool_end',
        tool: toolName(event),
        isError: event.isError === true,
        detail: firstDetail(output),
        ...(denied ? { denied: flatDetail(denied, DETAIL_MAX) } : {}),
        ...callIdOf(event),
      };
    }
    case 'message_end': {
      if (!isObj(event.message) || event.message.role !== 'assistant') return undefined;
      const text = firstDetail(textOf(event.message));
      return text === '' ? undefined : { kind: 'text', text };
    }
    case 'auto_retry_start':
      return { kind: 'retry', attempt: num(event.attempt), message: firstDetail(str(event.errorMessage) ?? '') };
    default:
      return undefined;
  }
}

/**
 * One attempt's (or one RPC turn's) events observed the one way json mode and RPC share: every line to the reader
 * (its summary judges the turn), an activity line for each event that has one, and the usage reported once per
 * change, at `message_end` only (usage moves there; summaries are snapshots, not free).
 */
export class TurnObserver {
  readonly reader = new StreamReader();
  // 0, not -1: the user message's message_end (zero tokens) is not a usage report.
  private lastTokens = 0;
  private answered = false;

  constructor(
    private readonly sinks: {
      onActivity?: (activity: Activity) => void;
      onUsage?: (figures: { tokens: number; cost: number }) => void;
      onAnswer?: () => void;
    },
  ) {}

  /** Feed one raw line; `known` is the event when the caller has parsed the line already (RPC framing). */
  take(line: string, known?: PiEvent): PiEvent | undefined {
    const read = this.reader.feed(line);
    const event = known ?? read;
    if (!event) return undefined;
    const activity = toActivity(event);
    if (activity) this.sinks.onActivity?.(activity);
    // pi streams an answer as message_update deltas (`assistantMessageEvent`, no message snapshot: rpc.md), so the
    // first one is the answer's first token; a snapshot's role is read too, for a pi that sends one.
    if (
      !this.answered &&
      event.type === 'message_update' &&
      (isObj(event.assistantMessageEvent) || (event.message as { role?: unknown } | undefined)?.role === 'assistant')
    ) {
      this.answered = true;
      this.sinks.onAnswer?.();
    }
    // Usage moves at an assistant's message_end, and at the entry of a call an extension made itself.
    if (event.type === 'message_end' || event.type === 'entry_appended') {
      const { tokens, cost } = this.reader.summary;
      if (tokens !== this.lastTokens) {
        this.lastTokens = tokens;
        this.sinks.onUsage?.({ tokens, cost });
      }
    }
    return event;
  }
}
