// The scripted model: a small local HTTP server speaking OpenAI chat-completions SSE, the way pi's
// `openai-completions` provider expects it. It plays tapes (see tape.ts) so the offline demo and the
// end-to-end tests drive the real pi with no key and no network.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  type ChatRequest,
  type Step,
  type Tapes,
  contentText,
  defaultErrorBody,
  exhaustedStep,
  selectTape,
  usageFor,
} from './tape.js';
import { cachedTokens, PromptCache, promptPrefixes } from './promptCache.js';
import { Conversations, sessionOf } from './conversation.js';
import { readBody, sendJson, splitEvery, splitWords } from './wire.js';
import { Holds } from './holds.js';

export interface RecordedRequest {
  /** 1-based arrival order across all tapes. */
  seq: number;
  tape: string;
  /** Index of the step played on that tape; -1 when the tape was exhausted. */
  step: number;
  kind: Step['kind'];
  exhausted: boolean;
  /** Number of messages in the request (history growth is visible here). */
  messages: number;
  /** When it arrived (Date.now()): a bench sets it against a run's own event times. */
  at: number;
  body: ChatRequest;
  /** The pi session the request named in its affinity header, when it sent one. */
  session?: string;
  /** What the request was billed, once its response has finished: prompt tokens, the cached part of them, output. */
  billed?: { prompt: number; cached: number; completion: number };
}

export interface ScriptedModelOptions {
  tapes: Tapes;
  /** Model ids listed by `GET /v1/models` (the requested id is echoed in completions either way). */
  models?: string[];
  /** Characters per text delta for `text` steps (several deltas exercise pi's streaming). */
  chunkChars?: number;
  /**
   * Bill a prompt prefix served before as cached input, as providers do (default true; see promptCache.ts). Off, every
   * prompt token is billed as new.
   */
  caching?: boolean;
}

export interface ScriptedModel {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `http://127.0.0.1:<port>/v1`: what a pi provider's `baseUrl` needs. */
  baseUrl: string;
  port: number;
  /** Every chat-completions request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Requests that landed on one tape. */
  requestsFor(tape: string): RecordedRequest[];
  /** Position of a tape's cursor (next step index). */
  /** Steps of the tape played to their end (all conversations). */
  cursor(tape: string): number;
  /**
   * The next request that lands on `tape` waits, before any byte of its answer, until `release()` (or close()):
   * `arrived` says when it came. A test drives a race by this event, not by how fast the machine is.
   */
  hold(tape: string): { arrived: Promise<RecordedRequest>; release(): void };
  /** Ends the server and every open socket, hung streams included. */
  close(): Promise<void>;
}

interface TapeState {
  /** The first step no conversation has claimed yet. */
  cursor: number;
  /** Steps played to their end (an error step counts once it has been served its `times`). */
  played: number;
  /** Each conversation's claimed run of steps: where it is in it, where it ends, failures served by its error step. */
  claims: Map<string, { pos: number; end: number; failures: number }>;
}

type Chunk = Record<string, unknown>;

/** A step after which the agent's turn is over: its report, or a text answer. */
function endsTurn(step: Step): boolean {
  if (step.kind === 'text' || step.kind === 'slow') return true;
  return step.kind === 'tools' && step.calls.some((c) => c.name === 'report_phase');
}

export async function startScriptedModel(opts: ScriptedModelOptions): Promise<ScriptedModel> {
  const tapes = opts.tapes;
  const modelIds = opts.models ?? ['alpha', 'beta'];
  const chunkChars = Math.max(1, opts.chunkChars ?? 24);
  const requests: RecordedRequest[] = [];
  const states = new Map<string, TapeState>();
  const sockets = new Set<Socket>();
  const cache = opts.caching === false ? undefined : new PromptCache();
  const conversations = new Conversations();
  const timers = new Set<NodeJS.Timeout>();
  const holds = new Holds<RecordedRequest>();
  let closed = false;

  const stateOf = (tape: string): TapeState => {
    let state = states.get(tape);
    if (!state) {
      state = { cursor: 0, played: 0, claims: new Map() };
      states.set(tape, state);
    }
    return state;
  };

  /**
   * Picks the step for a request and advances (error steps hold `times` times). A tape is played in turns: a
   * conversation (one system prompt: one agent in one folder) claims the steps up to the next one that ends a turn,
   * and plays them alone; once they are played its next request claims the next turn. One conversation at a time
   * reads the tape exactly as before; arms that run at once each get whole turns, in the order they first ask.
   */
  const nextStep = (tape: string, conversation: string): { step: Step; index: number } => {
    const steps = tapes[tape] ?? [];
    const state = stateOf(tape);
    let claim = state.claims.get(conversation);
    if (!claim || claim.pos >= claim.end) {
      const start = state.cursor;
      let end = start;
      while (end < steps.length && !endsTurn(steps[end]!)) end += 1;
      claim = { pos: start, end: Math.min(steps.length, end + 1), failures: 0 };
      state.cursor = claim.end;
      state.claims.set(conversation, claim);
    }
    const step = steps[claim.pos];
    if (!step) return { step: exhaustedStep(tape), index: -1 };
    const index = claim.pos;
    if (step.kind === 'error') {
      claim.failures += 1;
      if (claim.failures >= (step.times ?? 1)) {
        claim.pos += 1;
        claim.failures = 0;
        state.played += 1;
      }
    } else {
      claim.pos += 1;
      state.played += 1;
    }
    return { step, index };
  };

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const handleCompletion = async (body: ChatRequest, res: ServerResponse, session: string | undefined) => {
    const tape = selectTape(body, tapes);
    const { step, index } = nextStep(tape, conversations.of(body, session));
    const prefixes = cache ? promptPrefixes(body) : undefined;
    const cachedChars = prefixes ? cache!.cachedChars(prefixes) : 0;
    requests.push({
      seq: requests.length + 1,
      tape,
      step: index,
      kind: step.kind,
      exhausted: index === -1,
      messages: Array.isArray(body.messages) ? body.messages.length : 0,
      at: Date.now(),
      body,
      ...(session ? { session } : {}),
    });
    const seq = requests.length;
    const record = requests[seq - 1]!;
    await holds.pass(tape, record);
    const model = typeof body.model === 'string' ? body.model : (modelIds[0] ?? 'scripted');
    const id = `chatcmpl-scripted-${seq}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Chunk = {}): Chunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices,
      ...extra,
    });
    // The client may leave at any time (abort, timeout, close()): stop writing once it has.
    let gone = false;
    res.on('close', () => {
      gone = true;
    });
    const write = (data: Chunk | '[DONE]') => {
      if (gone || res.destroyed || res.writableEnded) return false;
      res.write(`data: ${data === '[DONE]' ? data : JSON.stringify(data)}\n\n`);
      return true;
    };
    const openStream = () => {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      res.flushHeaders();
      write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    };
    // The first token, after the think time (the prompt's prefill): from now on the prompt is a cached prefix.
    const firstToken = () => {
      if (prefixes) cache!.remember(prefixes);
    };
    const finish = (reason: 'stop' | 'tool_calls') => {
      const usage = usageFor(step, body);
      const cached = cachedTokens(cachedChars, usage.prompt);
      record.billed = { prompt: usage.prompt, cached, completion: usage.completion };
      write(chunk([{ index: 0, delta: {}, finish_reason: reason }]));
      write(
        chunk([], {
          usage: {
            prompt_tokens: usage.prompt,
            completion_tokens: usage.completion,
            total_tokens: usage.prompt + usage.completion,
            ...(cache ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
          },
        }),
      );
      write('[DONE]');
      res.end();
    };
    const textDelta = (content: string) => chunk([{ index: 0, delta: { content }, finish_reason: null }]);

    switch (step.kind) {
      case 'error': {
        const payload = step.body ?? defaultErrorBody(step.status);
        res.writeHead(step.status, { 'content-type': 'application/json' });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
        return;
      }
      case 'text': {
        openStream();
        if (step.thinkMs) await delay(step.thinkMs);
        if (gone) return;
        firstToken();
        for (const piece of splitEvery(step.text, chunkChars)) write(textDelta(piece));
        finish('stop');
        return;
      }
      case 'slow': {
        openStream();
        for (const piece of splitWords(step.text)) {
          await delay(step.chunkDelayMs);
          firstToken();
          if (!write(textDelta(piece))) return; // the client went away (abort, timeout): stop quietly
        }
        if (!gone) finish('stop');
        return;
      }
      case 'tools': {
        openStream();
        if (step.thinkMs) await delay(step.thinkMs);
        if (gone) return;
        firstToken();
        if (step.text) for (const piece of splitEvery(step.text, chunkChars)) write(textDelta(piece));
        if (step.afterFirstToken) {
          await step.afterFirstToken;
          if (gone) return;
        }
        step.calls.forEach((toolCall, i) => {
          const callId = `call_${seq}_${i}`;
          const args = withShownFolder(JSON.stringify(toolCall.args), body);
          const toolDelta = (delta: Record<string, unknown>) =>
            chunk([{ index: 0, delta: { tool_calls: [{ index: i, ...delta }] }, finish_reason: null }]);
          // Name first, then the arguments in two halves: pi must reassemble streamed JSON.
          write(toolDelta({ id: callId, type: 'function', function: { name: toolCall.name, arguments: '' } }));
          const half = Math.ceil(args.length / 2);
          for (const part of [args.slice(0, half), args.slice(half)]) {
            if (part) write(toolDelta({ function: { arguments: part } }));
          }
        });
        finish('tool_calls');
        return;
      }
      case 'hang': {
        openStream(); // then nothing, ever: only close() or the client ends this response
        return;
      }
      case 'drop': {
        openStream();
        firstToken();
        write(textDelta('partial answer '));
        // Let the bytes leave, then cut the connection mid-stream.
        await delay(10);
        res.socket?.destroy();
        return;
      }
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      sendJson(res, 200, {
        object: 'list',
        data: modelIds.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })),
      });
      return;
    }
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      readBody(req)
        .then((raw) => {
          let body: ChatRequest;
          try {
            body = JSON.parse(raw) as ChatRequest;
          } catch {
            sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
            return;
          }
          if (body.stream !== true) {
            sendJson(res, 400, {
              error: { message: 'the scripted model only streams (stream: true)', type: 'invalid_request_error' },
            });
            return;
          }
          return handleCompletion(body, res, sessionOf(req));
        })
        .catch(() => res.destroy());
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found' } });
  });

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseUrl: `${url}/v1`,
    port,
    requests,
    requestsFor: (tape) => requests.filter((r) => r.tape === tape),
    hold: (tape) => holds.add(tape),
    cursor: (tape) => states.get(tape)?.played ?? 0,
    close: async () => {
      if (closed) return;
      closed = true;
      holds.releaseAll();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      // A hung stream keeps its socket open forever: destroy every socket so close() always returns.
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}

/**
 * A tape's `{{cwd}}` in tool arguments: the folder the request's system prompt names, as a model would write a path
 * it was shown (tests of the arms' lens). Left as it is when the prompt names none.
 */
function withShownFolder(json: string, body: ChatRequest): string {
  if (!json.includes('{{cwd}}')) return json;
  const first = Array.isArray(body.messages) ? body.messages[0] : undefined;
  const shown = /(?:Current working directory:\s*|<cwd>\s*)([^\s<]+)/.exec(
    first ? contentText(first.content) : '',
  )?.[1];
  return shown ? json.split('{{cwd}}').join(JSON.stringify(shown).slice(1, -1)) : json;
}
