// The scripted model server spoken to by a plain fetch client: SSE shape, tape selection, cursors,
// errors, exhaustion, usage numbers, and the misbehaving steps (hang, drop) that close() must survive.

import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeAgentDir } from '../../src/scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted/server.js';
import { call, drop, fail, hang, report, say, selectTape, slow, type Tapes } from '../../src/scripted/tape.js';

let model: ScriptedModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(tapes: Tapes): Promise<ScriptedModel> {
  model = await startScriptedModel({ tapes });
  return model;
}

type Msg = { role: string; content: unknown };
const user = (content: string): Msg => ({ role: 'user', content });

function post(m: ScriptedModel, body: Record<string, unknown>) {
  return fetch(`${m.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function chatBody(messages: Msg[], extra: Record<string, unknown> = {}) {
  return { model: 'alpha', stream: true, stream_options: { include_usage: true }, messages, ...extra };
}

/** Splits an SSE body into its `data:` payloads; JSON ones parsed, `[DONE]` kept as a string. */
function sseEvents(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      const data = block.slice('data: '.length);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

type ChunkJson = {
  object: string;
  model: string;
  choices: {
    delta: {
      content?: string;
      tool_calls?: { index: number; id?: string; function: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
  };
};

async function complete(m: ScriptedModel, messages: Msg[], extra: Record<string, unknown> = {}) {
  const res = await post(m, chatBody(messages, extra));
  const raw = await res.text();
  const events = res.headers.get('content-type')?.startsWith('text/event-stream') ? sseEvents(raw) : [];
  const chunks = events.filter((e): e is ChunkJson => typeof e === 'object');
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean);
  const usage = chunks.find((c) => c.choices.length === 0)?.usage;
  return { res, raw, events, chunks, text, finish, usage };
}

describe('SSE shape', () => {
  it('streams a text step as chat.completion.chunk deltas, a finish chunk, a usage chunk and [DONE]', async () => {
    const m = await start({ default: [say('Hello there, this text spans several deltas of the stream.')] });
    const out = await complete(m, [user('hi')]);
    expect(out.res.status).toBe(200);
    expect(out.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(out.events.at(-1)).toBe('[DONE]');
    expect(out.chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'alpha')).toBe(true);
    expect(out.chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(out.text).toBe('Hello there, this text spans several deltas of the stream.');
    expect(out.finish).toEqual(['stop']);
    const last = out.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toBeDefined();
  });

  it('streams tool calls whose name and split JSON arguments reassemble, ending with finish_reason tool_calls', async () => {
    const m = await start({
      default: [call('write', { path: 'a.txt', content: 'x\ny' }), report({ status: 'success', summary: 'ok' })],
    });
    for (const expected of [
      { name: 'write', args: { path: 'a.txt', content: 'x\ny' } },
      { name: 'report_phase', args: { status: 'success', summary: 'ok' } },
    ]) {
      const out = await complete(m, [user('go')]);
      const deltas = out.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      expect(deltas[0]?.id).toMatch(/^call_/);
      expect(deltas.map((d) => d.function.name).filter(Boolean)).toEqual([expected.name]);
      expect(JSON.parse(deltas.map((d) => d.function.arguments ?? '').join(''))).toEqual(expected.args);
      expect(out.finish).toEqual(['tool_calls']);
    }
  });

  it('lists its models on GET /v1/models and refuses what it does not speak', async () => {
    const m = await start({});
    const list = (await (await fetch(`${m.baseUrl}/models`)).json()) as { data: { id: string }[] };
    expect(list.data.map((d) => d.id)).toEqual(['alpha', 'beta']);
    expect((await post(m, { model: 'alpha', messages: [] })).status).toBe(400); // stream missing
    const bad = await fetch(`${m.baseUrl}/chat/completions`, { method: 'POST', body: '{not json' });
    expect(bad.status).toBe(400);
    expect((await fetch(`${m.url}/nowhere`)).status).toBe(404);
    expect(m.requests).toHaveLength(0);
  });
});

describe('tape selection and cursors', () => {
  it('picks the newest user message carrying a directive, and its last directive', () => {
    expect(selectTape({ messages: [user('no directive')] })).toBe('default');
    expect(selectTape({ messages: [user('[tape:a] then [tape:b]')] })).toBe('b');
    // A correction turn without a directive stays on the session's tape.
    expect(
      selectTape({ messages: [user('[tape:a] start'), { role: 'assistant', content: '[tape:z]' }, user('fix it')] }),
    ).toBe('a');
    expect(selectTape({ messages: [user('[tape:a] start'), user('[tape:b] switch')] })).toBe('b');
    // pi may send content as an array of text parts.
    expect(selectTape({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x [tape:parts]' }] }] })).toBe(
      'parts',
    );
  });

  it('gives a model:<id> tape every request for that model, whatever the directive', () => {
    const tapes = { default: [say('d')], 'model:beta': [say('b')] };
    expect(selectTape({ model: 'beta', messages: [user('[tape:a] go')] }, tapes)).toBe('model:beta');
    expect(selectTape({ model: 'alpha', messages: [user('[tape:a] go')] }, tapes)).toBe('a');
    expect(selectTape({ model: 'beta', messages: [user('go')] })).toBe('default');
  });

  it('plays a tape in turns: agents asking at once (their own system prompts) each get whole turns, in the order they first ask', async () => {
    const m = await start({
      t: [
        call('write', { path: 'a' }),
        report({ status: 'success' }),
        call('write', { path: 'b' }),
        report({ status: 'success' }),
        say('third'),
      ],
    });
    const ask = async (folder: string) => {
      const out = await complete(m, [{ role: 'system', content: `You work in ${folder}` }, user('[tape:t] go')]);
      const name = out.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).find((d) => d.function.name)
        ?.function.name;
      return name ?? out.text;
    };
    // Arm 1 asks first, then arm 2, then each goes on: each plays its own turn through, never the other's.
    const order = [
      await ask('/arm_1'),
      await ask('/arm_2'),
      await ask('/arm_2'),
      await ask('/arm_1'),
      await ask('/arm_1'),
    ];
    expect(order).toEqual(['write', 'write', 'report_phase', 'report_phase', 'third']);
    expect(m.requests.map((r) => r.step)).toEqual([0, 2, 3, 1, 4]);
    expect(m.cursor('t')).toBe(5);
  });

  it('keeps one cursor per tape, advanced per request', async () => {
    const m = await start({ a: [say('a0'), say('a1')], b: [say('b0'), say('b1')] });
    const texts: string[] = [];
    for (const tape of ['a', 'b', 'b', 'a']) texts.push((await complete(m, [user(`[tape:${tape}] go`)])).text);
    expect(texts).toEqual(['a0', 'b0', 'b1', 'a1']);
    expect(m.requests.map((r) => [r.tape, r.step])).toEqual([
      ['a', 0],
      ['b', 0],
      ['b', 1],
      ['a', 1],
    ]);
    expect(m.cursor('a')).toBe(2);
    expect(m.requestsFor('b').map((r) => r.messages)).toEqual([1, 1]);
  });

  it('answers and records "(tape <name> exhausted)" once a tape runs out, unknown tapes included', async () => {
    const m = await start({ short: [say('only')] });
    expect((await complete(m, [user('[tape:short]')])).text).toBe('only');
    expect((await complete(m, [user('[tape:short]')])).text).toBe('(tape short exhausted)');
    expect((await complete(m, [user('[tape:ghost]')])).text).toBe('(tape ghost exhausted)');
    expect(m.requests.map((r) => [r.tape, r.step, r.exhausted])).toEqual([
      ['short', 0, false],
      ['short', -1, true],
      ['ghost', -1, true],
    ]);
  });
});

describe('errors', () => {
  it('fails `times` requests with the status and a JSON error body, then moves on', async () => {
    const m = await start({ flaky: [fail(503, { times: 2 }), say('back')] });
    const first = await complete(m, [user('[tape:flaky]')]);
    expect(first.res.status).toBe(503);
    expect(JSON.parse(first.raw)).toEqual({
      error: { message: 'Service unavailable', type: 'server_error', code: 503 },
    });
    expect((await complete(m, [user('[tape:flaky]')])).res.status).toBe(503);
    const third = await complete(m, [user('[tape:flaky]')]);
    expect([third.res.status, third.text]).toEqual([200, 'back']);
    expect(m.requests.map((r) => r.step)).toEqual([0, 0, 1]);
  });

  it('never clears an error with times: Infinity, and sends a custom body as given', async () => {
    const m = await start({
      denied: [fail(401, { times: Infinity, body: { error: { message: 'bad key' } } }), say('unreachable')],
    });
    for (let i = 0; i < 4; i++) {
      const out = await complete(m, [user('[tape:denied]')]);
      expect(out.res.status).toBe(401);
      expect(JSON.parse(out.raw)).toEqual({ error: { message: 'bad key' } });
    }
    expect(m.cursor('denied')).toBe(0);
  });
});

describe('usage', () => {
  it('defaults to ceil(chars / 4) of the request and of the reply', async () => {
    const m = await start({ u: [say('z'.repeat(9)), call('bash', { command: 'ls' })] });
    // 10 + 13 + 7 chars of text = 30 → 8 prompt tokens; 9 reply chars → 3 completion tokens.
    const messages = [
      { role: 'system', content: 'x'.repeat(10) },
      user('[tape:u] abcd'),
      { role: 'user', content: [{ type: 'text', text: 'y'.repeat(7) }] },
    ];
    const text = await complete(m, messages);
    expect(text.usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 3,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    // The tool list and earlier assistant tool calls count as their JSON text.
    const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }];
    const toolCalls = [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }];
    const withTools = await complete(
      m,
      [...messages, { role: 'assistant', content: '', tool_calls: toolCalls } as Msg],
      { tools },
    );
    const chars = 30 + JSON.stringify(toolCalls).length + JSON.stringify(tools).length;
    // Reply: name "bash" (4) + {"command":"ls"} (16) = 20 chars → 5 tokens. A tool list comes first in a prompt, so
    // the first request is no cached prefix of this one.
    expect(withTools.usage).toEqual({
      prompt_tokens: Math.ceil(chars / 4),
      completion_tokens: 5,
      total_tokens: Math.ceil(chars / 4) + 5,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('reports an explicit usage exactly', async () => {
    const m = await start({ default: [say('hi', { prompt: 1234, completion: 56 }), say('again', { completion: 7 })] });
    expect((await complete(m, [user('q')])).usage).toMatchObject({
      prompt_tokens: 1234,
      completion_tokens: 56,
      total_tokens: 1290,
    });
    // Only the completion is pinned: the prompt still counts the request ("q" → 1 token).
    expect((await complete(m, [user('q')])).usage).toMatchObject({
      prompt_tokens: 1,
      completion_tokens: 7,
      total_tokens: 8,
    });
  });
});

describe('prompt cache', () => {
  const sys = { role: 'system', content: 's'.repeat(400) };
  const ask = user('[tape:c] ' + 'a'.repeat(391));
  const answer = { role: 'assistant', content: 'b'.repeat(400) } as Msg;

  it('bills the prefix served before as cached, the new part as input; another routing key or model misses', async () => {
    const m = await start({ c: [say('one'), say('two'), say('three'), say('four'), say('five')] });
    expect((await complete(m, [sys, ask])).usage?.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    // 200 tokens served (system + ask): the follow-up pays 100 of its 300 as new.
    const next = await complete(m, [sys, ask, answer]);
    expect(next.usage).toMatchObject({ prompt_tokens: 300, prompt_tokens_details: { cached_tokens: 200 } });
    expect(m.requests[1]!.billed).toEqual({ prompt: 300, cached: 200, completion: 1 });
    expect((await complete(m, [sys, ask, answer], { prompt_cache_key: 'other' })).usage?.prompt_tokens_details).toEqual(
      { cached_tokens: 0 },
    );
    expect((await complete(m, [sys, ask, answer], { model: 'beta' })).usage?.prompt_tokens_details).toEqual({
      cached_tokens: 0,
    });
    // A prompt that differs in its first message shares nothing, whatever follows.
    expect(
      (await complete(m, [{ role: 'system', content: 't'.repeat(400) }, ask, answer])).usage?.prompt_tokens_details,
    ).toEqual({ cached_tokens: 0 });
  });

  it('matches prefixes without the cache markers pi moves to the newest message', async () => {
    const m = await start({ c: [say('one'), say('two')] });
    const marked = (text: string) => ({
      role: 'user',
      content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }],
    });
    await complete(m, [sys, marked('[tape:c] ' + 'a'.repeat(391))]);
    const next = await complete(m, [
      sys,
      { role: 'user', content: [{ type: 'text', text: '[tape:c] ' + 'a'.repeat(391) }] },
      { ...answer, content: [{ type: 'text', text: 'b'.repeat(400), cache_control: { type: 'ephemeral' } }] } as Msg,
    ]);
    expect(next.usage).toMatchObject({ prompt_tokens: 300, prompt_tokens_details: { cached_tokens: 200 } });
  });

  it('caches a prompt once its response has begun: two sent at once both pay in full', async () => {
    const m = await start({
      c: [say('slow one', undefined, { thinkMs: 150 }), say('slow two', undefined, { thinkMs: 150 }), say('after')],
    });
    const [a, b] = await Promise.all([complete(m, [sys, ask]), complete(m, [sys, ask])]);
    expect([a.usage?.prompt_tokens_details, b.usage?.prompt_tokens_details]).toEqual([
      { cached_tokens: 0 },
      { cached_tokens: 0 },
    ]);
    expect((await complete(m, [sys, ask])).usage?.prompt_tokens_details).toEqual({ cached_tokens: 200 });
  });

  it('is off with caching: false (every prompt token new, no details)', async () => {
    model = await startScriptedModel({ tapes: { c: [say('one'), say('two')] }, caching: false });
    await complete(model, [sys, ask]);
    const again = await complete(model, [sys, ask]);
    expect(again.usage).toEqual({ prompt_tokens: 200, completion_tokens: 1, total_tokens: 201 });
    expect(model.requests[1]!.billed).toEqual({ prompt: 200, cached: 0, completion: 1 });
  });
});

describe('conversations by pi session', () => {
  const postAs = (m: ScriptedModel, session: string, messages: Msg[]) =>
    fetch(`${m.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-affinity': session },
      body: JSON.stringify(chatBody(messages)),
    }).then((r) => r.text());
  const forked = [
    { role: 'system', content: 'one prompt for all' },
    user('[tape:t] go'),
    { role: 'assistant', content: 'primed' } as Msg,
    user('now build'),
  ];

  it('forks that send byte-identical prompts each play whole turns of their own', async () => {
    const m = await start({ t: [call('ls', {}), say('arm A done'), call('ls', {}), say('arm B done')] });
    await postAs(m, 'arm-a', forked);
    await postAs(m, 'arm-b', forked);
    const a2 = await postAs(m, 'arm-a', forked);
    const b2 = await postAs(m, 'arm-b', forked);
    expect(m.requests.map((r) => [r.session, r.step])).toEqual([
      ['arm-a', 0],
      ['arm-b', 2],
      ['arm-a', 1],
      ['arm-b', 3],
    ]);
    expect(a2).toContain('arm A done');
    expect(b2).toContain('arm B done');
  });

  it('a fresh session of the same agent goes on with the turn its predecessor left (a new attempt)', async () => {
    const m = await start({ t: [call('ls', {}), say('the end of the turn')] });
    const fresh = [{ role: 'system', content: 'the agent in its folder' }, user('[tape:t] go')];
    await postAs(m, 'attempt-1', fresh);
    const second = await postAs(m, 'attempt-2', fresh);
    expect(m.requests.map((r) => r.step)).toEqual([0, 1]);
    expect(second).toContain('the end of the turn');
  });
});

describe('think time', () => {
  it('holds the content back after the headers; a close() meanwhile ends the stream with nothing sent', async () => {
    const m = await start({
      default: [say('never seen', undefined, { thinkMs: 60_000 }), call('ls', {}, { thinkMs: 1 })],
    });
    const res = await post(m, chatBody([user('q')]));
    expect(res.status).toBe(200);
    const reading = res.text().catch(() => '');
    await m.close();
    expect(await reading).not.toContain('never seen');
  });

  it('still delivers the whole step once the pause is over', async () => {
    const m = await start({ default: [call('ls', { path: '.' }, { thinkMs: 5 })] });
    const out = await complete(m, [user('q')]);
    expect(out.finish).toEqual(['tool_calls']);
  });
});

describe('misbehaving streams', () => {
  it('slow: one delta per word, the whole text arrives', async () => {
    const m = await start({ default: [slow('one two three', 1)] });
    const out = await complete(m, [user('q')]);
    expect(out.chunks.map((c) => c.choices[0]?.delta.content).filter(Boolean)).toEqual(['one ', 'two ', 'three']);
    expect(out.events.at(-1)).toBe('[DONE]');
  });

  it('hang: headers and a first chunk arrive, then nothing; close() still returns and ends the stream', async () => {
    const m = await start({ default: [hang()] });
    const res = await post(m, chatBody([user('q')]));
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{/);
    const rest = reader.read().then(
      (r) => (r.done ? 'ended' : 'more data'),
      () => 'cut',
    );
    await m.close();
    expect(await rest).not.toBe('more data');
  });

  it('drop: the socket dies mid-stream, without [DONE]', async () => {
    const m = await start({ default: [drop(), say('after')] });
    const res = await post(m, chatBody([user('q')]));
    const outcome = await res.text().then(
      (text) => (text.includes('[DONE]') ? 'complete' : 'truncated'),
      () => 'cut',
    );
    expect(outcome).not.toBe('complete');
    // The server keeps serving: the tape moved on.
    expect((await complete(m, [user('q')])).text).toBe('after');
  });

  it('close() is idempotent', async () => {
    const m = await start({});
    await m.close();
    await m.close();
  });
});

describe('agent dir', () => {
  it('writes a scripted provider with three priced models and fast retries', async () => {
    const m = await start({});
    const agent = makeAgentDir({ baseUrl: m.baseUrl });
    const models = JSON.parse(readFileSync(join(agent.dir, 'models.json'), 'utf8'));
    const provider = models.providers.scripted;
    expect(provider).toMatchObject({
      baseUrl: m.baseUrl,
      api: 'openai-completions',
      compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, sendSessionAffinityHeaders: true },
    });
    expect(typeof provider.apiKey).toBe('string');
    expect(provider.models.map((x: { id: string; cost: unknown }) => [x.id, x.cost])).toEqual([
      ['alpha', { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 0 }],
      ['beta', { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 0 }],
      ['gamma', { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 0 }],
    ]);
    expect(JSON.parse(readFileSync(join(agent.dir, 'settings.json'), 'utf8'))).toEqual({
      retry: { enabled: true, maxRetries: 2, baseDelayMs: 200 },
      quietStartup: true,
    });
    expect(agent.env).toEqual({
      PI_CODING_AGENT_DIR: agent.dir,
      PI_OFFLINE: '1',
      PI_SKIP_VERSION_CHECK: '1',
      PI_TELEMETRY: '0',
    });
    expect(agent.route).toBe('scripted/alpha');
    rmSync(agent.dir, { recursive: true, force: true });
  });
});
