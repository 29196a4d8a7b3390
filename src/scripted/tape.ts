// Tapes: the scripted model's repertoire. Pure data and pure functions only (no sockets here), so the
// demo, the server and the tests share one definition of "which step answers this request" and
// "how many tokens does it cost".

export type Usage = { prompt?: number; completion?: number };

export type ToolCallSpec = { name: string; args: Record<string, unknown> };

export type Step =
  /** `thinkMs`: a pause after the stream opens, before any content (a model thinking; the demo uses it). */
  | { kind: 'text'; text: string; usage?: Usage; thinkMs?: number }
  /** `afterFirstToken`: once `text` has streamed, the rest waits for it (a test holds an answer mid-stream, by an event). */
  | {
      kind: 'tools';
      calls: ToolCallSpec[];
      text?: string;
      usage?: Usage;
      thinkMs?: number;
      afterFirstToken?: Promise<unknown>;
    }
  /** Fails `times` requests (default 1; Infinity = never clears), then the tape moves on. */
  | { kind: 'error'; status: number; body?: unknown; times?: number }
  | { kind: 'slow'; text: string; chunkDelayMs: number; usage?: Usage }
  /** Sends the SSE headers and one empty delta, then never writes again. */
  | { kind: 'hang' }
  /** Starts the stream, then destroys the socket. */
  | { kind: 'drop' };

/** Named step lists; `default` answers requests that carry no `[tape:<name>]` directive. */
export type Tapes = Record<string, Step[]>;

export const DEFAULT_TAPE = 'default';

// ---------------------------------------------------------------------------------------------
// Step builders

export function say(text: string, usage?: Usage, opts: { thinkMs?: number } = {}): Step {
  return { kind: 'text', text, ...(usage ? { usage } : {}), ...opts };
}

export type ToolStepOptions = { text?: string; usage?: Usage; thinkMs?: number; afterFirstToken?: Promise<unknown> };

export function call(name: string, args: Record<string, unknown>, opts: ToolStepOptions = {}): Step {
  return { kind: 'tools', calls: [{ name, args }], ...opts };
}

/** Several tool calls in one assistant message (pi runs them, then asks the model again). */
export function calls(list: ToolCallSpec[], opts: ToolStepOptions = {}): Step {
  return { kind: 'tools', calls: list, ...opts };
}

/** The typed gate: a `report_phase` tool call carrying the envelope as its arguments. */
export function report(envelope: Record<string, unknown>, usage?: Usage, opts: { thinkMs?: number } = {}): Step {
  return call('report_phase', envelope, { ...(usage ? { usage } : {}), ...opts });
}

export function fail(status: number, opts: { body?: unknown; times?: number } = {}): Step {
  return { kind: 'error', status, ...opts };
}

export function slow(text: string, chunkDelayMs: number, usage?: Usage): Step {
  return { kind: 'slow', text, chunkDelayMs, ...(usage ? { usage } : {}) };
}

export function hang(): Step {
  return { kind: 'hang' };
}

export function drop(): Step {
  return { kind: 'drop' };
}

// ---------------------------------------------------------------------------------------------
// Reading an OpenAI chat-completions request

export interface ChatMessage {
  role?: string;
  content?: unknown;
  tool_calls?: unknown;
  [key: string]: unknown;
}

export interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

/** The text of a message's `content`, whether a plain string or an array of `{type: 'text', text}` parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
      text += (part as { text: string }).text;
    }
  }
  return text;
}

const DIRECTIVE = /\[tape:([A-Za-z0-9._-]+)\]/g;

/** Prefix of the tapes that answer one model whatever the directive (`model:beta`). */
export const MODEL_TAPE_PREFIX = 'model:';

/** The last `[tape:<name>]` in a text, or undefined. */
export function lastDirective(text: string): string | undefined {
  let found: string | undefined;
  for (const match of text.matchAll(DIRECTIVE)) found = match[1];
  return found;
}

/**
 * Which tape answers this request: scanning user messages from the newest backwards, the first one
 * that carries a directive decides (its last directive wins). A correction turn without a directive
 * therefore stays on the tape its session started with. A `model:<id>` tape, when present, wins.
 */
export function selectTape(body: ChatRequest, tapes?: Tapes): string {
  // A tape named `model:<id>` answers every request for that model: a fallback model gets its own script.
  const byModel = typeof body.model === 'string' ? `${MODEL_TAPE_PREFIX}${body.model}` : undefined;
  if (byModel && tapes && byModel in tapes) return byModel;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    const name = lastDirective(contentText(message.content));
    if (name !== undefined) return name;
  }
  return DEFAULT_TAPE;
}

// ---------------------------------------------------------------------------------------------
// Deterministic token counts (about four characters per token, always rounded up)

function tokensOf(chars: number): number {
  return Math.ceil(chars / 4);
}

/** Characters the request "costs": every message's text, its tool calls as JSON, and the tool list as JSON. */
export function promptChars(body: ChatRequest): number {
  let chars = 0;
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    chars += contentText(message.content).length;
    if (message.tool_calls !== undefined && message.tool_calls !== null)
      chars += JSON.stringify(message.tool_calls).length;
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) chars += JSON.stringify(body.tools).length;
  return chars;
}

export function countPromptTokens(body: ChatRequest): number {
  return tokensOf(promptChars(body));
}

/** Characters of a reply: its text plus, per tool call, the name and the JSON of the arguments. */
export function replyChars(text: string, toolCalls: ToolCallSpec[] = []): number {
  let chars = text.length;
  for (const c of toolCalls) chars += c.name.length + JSON.stringify(c.args).length;
  return chars;
}

export function countCompletionTokens(text: string, toolCalls: ToolCallSpec[] = []): number {
  return tokensOf(replyChars(text, toolCalls));
}

/** The usage numbers a step reports for a request: explicit `usage` wins, else the deterministic counts. */
export function usageFor(step: Step, body: ChatRequest): { prompt: number; completion: number } {
  const explicit = 'usage' in step ? step.usage : undefined;
  let text = '';
  let toolCalls: ToolCallSpec[] = [];
  if (step.kind === 'text' || step.kind === 'slow') text = step.text;
  if (step.kind === 'tools') {
    text = step.text ?? '';
    toolCalls = step.calls;
  }
  return {
    prompt: explicit?.prompt ?? countPromptTokens(body),
    completion: explicit?.completion ?? countCompletionTokens(text, toolCalls),
  };
}

/** The answer played when a tape has no step left; recorded like any other. */
export function exhaustedStep(tape: string): Step {
  return { kind: 'text', text: `(tape ${tape} exhausted)` };
}

/** Default error bodies shaped like an OpenAI error, with wording pi's retry rules recognise. */
export function defaultErrorBody(status: number): unknown {
  const message =
    status === 429
      ? 'Rate limit exceeded'
      : status === 401
        ? 'Invalid API key'
        : status === 403
          ? 'Forbidden'
          : status === 400
            ? 'Bad request'
            : status >= 500
              ? 'Service unavailable'
              : 'Scripted error';
  const type =
    status === 429
      ? 'rate_limit_error'
      : status === 400
        ? 'invalid_request_error'
        : status >= 500
          ? 'server_error'
          : 'api_error';
  return { error: { message, type, code: status } };
}
