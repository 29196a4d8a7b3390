// The pure half of the RPC client: framing of pi's stdout (through the one LineSplitter), classification of
// lines, id correlation, and the rejection of every waiting command when pi goes away.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineSplitter } from '../../src/pi/lines.js';
import {
  classifyLine,
  encodeCommand,
  isTurnEnd,
  parseSessionStats,
  parseState,
  PendingCommands,
  promptDisposition,
  RpcCommandError,
  RpcTimeoutError,
  uiRefusal,
} from '../../src/pi/rpcProtocol.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('framing of an RPC stdout', () => {
  it('keeps U+2028/U+2029 inside a JSON string and splits on LF only, CRLF tolerated', () => {
    const event = { type: 'message_update', text: 'line one\u2028still one\u2029and this' };
    const bytes = Buffer.from(`${JSON.stringify(event)}\r\n{"type":"agent_settled"}\n`);
    const splitter = new LineSplitter();
    // Torn in the middle of the 3-byte U+2028 sequence: the character must come out whole.
    const cut = bytes.indexOf(Buffer.from('\u2028')) + 1;
    const lines = [...splitter.push(bytes.subarray(0, cut)), ...splitter.push(bytes.subarray(cut))];
    expect(lines).toHaveLength(2);
    const first = classifyLine(lines[0]!);
    expect(first).toEqual({ kind: 'event', event });
    const second = classifyLine(lines[1]!);
    expect(second.kind === 'event' && isTurnEnd(second.event)).toBe(true);
  });

  it('escapes U+2028/U+2029 in commands it writes, which parse back to the same text', () => {
    const line = encodeCommand('factory-1', 'prompt', { message: 'a\u2028b\u2029c\nd' });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\u2028\u2029]/u);
    expect(JSON.parse(line)).toEqual({ id: 'factory-1', type: 'prompt', message: 'a\u2028b\u2029c\nd' });
  });

  it('an id or type in the fields never overrides the command', () => {
    expect(JSON.parse(encodeCommand('factory-2', 'abort', { id: 'x', type: 'prompt' }))).toEqual({
      id: 'factory-2',
      type: 'abort',
    });
  });
});

describe('classifyLine', () => {
  it('reads responses, with or without success', () => {
    expect(
      classifyLine(
        '{"id":"factory-3","type":"response","command":"get_state","success":true,"data":{"sessionId":"s"}}',
      ),
    ).toEqual({
      kind: 'response',
      response: { id: 'factory-3', command: 'get_state', success: true, data: { sessionId: 's' }, error: undefined },
    });
    const refused = classifyLine(
      '{"id":"factory-4","type":"response","command":"set_model","success":false,"error":"Model not found: a/b"}',
    );
    expect(refused).toMatchObject({ kind: 'response', response: { success: false, error: 'Model not found: a/b' } });
  });

  it('tells dialog UI requests from fire-and-forget ones', () => {
    expect(
      classifyLine(
        '{"type":"extension_ui_request","id":"u1","method":"confirm","title":"damage-control","message":"Allow?"}',
      ),
    ).toEqual({
      kind: 'ui_request',
      request: { id: 'u1', method: 'confirm', title: 'damage-control', message: 'Allow?' },
      dialog: true,
    });
    for (const method of ['select', 'input', 'editor']) {
      expect(classifyLine(`{"type":"extension_ui_request","id":"u","method":"${method}"}`)).toMatchObject({
        dialog: true,
      });
    }
    expect(classifyLine('{"type":"extension_ui_request","id":"u2","method":"notify","message":"hi"}')).toMatchObject({
      kind: 'ui_request',
      dialog: false,
    });
  });

  it('counts garbage as noise, never as an event', () => {
    for (const line of ['not json', '[1,2]', '{"no":"type"}', '{"type":7}', 'null'])
      expect(classifyLine(line)).toEqual({ kind: 'noise' });
  });

  it('writes the cancelled answer to a dialog', () => {
    expect(JSON.parse(uiRefusal('u1'))).toEqual({ type: 'extension_ui_response', id: 'u1', cancelled: true });
  });
});

describe('PendingCommands', () => {
  const response = (id: string | undefined, success = true, extra: Record<string, unknown> = {}) => ({
    id,
    command: 'get_state',
    success,
    ...extra,
  });

  it('resolves each command with the data of the response carrying its id, in any order', async () => {
    const pending = new PendingCommands('t');
    const a = pending.nextId();
    const b = pending.nextId();
    expect(a).not.toBe(b);
    const pa = pending.register(a, 'get_state', 10_000);
    const pb = pending.register(b, 'get_session_stats', 10_000);
    expect(pending.settle(response(b, true, { data: 'B' }))).toBe(true);
    expect(pending.settle(response(a, true, { data: 'A' }))).toBe(true);
    await expect(pa).resolves.toBe('A');
    await expect(pb).resolves.toBe('B');
    expect(pending.size).toBe(0);
  });

  it('drops and counts a response for an unknown id or without id, leaving the waiters alone', async () => {
    const pending = new PendingCommands('t');
    const id = pending.nextId();
    const p = pending.register(id, 'get_state', 10_000);
    expect(pending.settle(response('t-999'))).toBe(false);
    expect(pending.settle(response(undefined))).toBe(false);
    expect(pending.unmatched).toBe(2);
    expect(pending.size).toBe(1);
    pending.settle(response(id, true, { data: 1 }));
    await expect(p).resolves.toBe(1);
    // A second response for the same id is not ours any more.
    expect(pending.settle(response(id))).toBe(false);
  });

  it('rejects a refused command with pi’s own words', async () => {
    const pending = new PendingCommands('t');
    const id = pending.nextId();
    const p = pending.register(id, 'set_model', 10_000);
    pending.settle({ id, command: 'set_model', success: false, error: 'Model not found: scripted/zzz' });
    const error = await p.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcCommandError);
    expect((error as RpcCommandError).piError).toBe('Model not found: scripted/zzz');
  });

  it('times a command out on its own deadline; its late response is then unmatched', async () => {
    vi.useFakeTimers();
    const pending = new PendingCommands('t');
    const slow = pending.register('t-1', 'clone', 1_000);
    const patient = pending.register('t-2', 'get_state', 60_000);
    vi.advanceTimersByTime(1_001);
    await expect(slow).rejects.toBeInstanceOf(RpcTimeoutError);
    expect(pending.settle(response('t-1'))).toBe(false);
    expect(pending.settle(response('t-2', true, { data: 'ok' }))).toBe(true);
    await expect(patient).resolves.toBe('ok');
  });

  it('rejects every pending command at once, and every later one, when pi exits', async () => {
    const pending = new PendingCommands('t');
    const waiters = ['prompt', 'get_state', 'abort'].map((command) =>
      pending.register(pending.nextId(), command, 60_000),
    );
    const died = new Error('pi died mid-turn');
    pending.rejectAll(died);
    for (const waiter of waiters) await expect(waiter).rejects.toBe(died);
    expect(pending.size).toBe(0);
    await expect(pending.register(pending.nextId(), 'get_state', 60_000)).rejects.toBe(died);
  });
});

describe('state readers', () => {
  it('reads get_state, naming the model as provider/id', () => {
    const state = parseState({
      sessionId: 's1',
      sessionFile: '/x/s1.jsonl',
      messageCount: 4,
      isStreaming: false,
      model: { provider: 'scripted', id: 'beta' },
    });
    expect(state).toEqual({
      sessionId: 's1',
      sessionFile: '/x/s1.jsonl',
      messageCount: 4,
      isStreaming: false,
      model: 'scripted/beta',
      thinkingLevel: undefined,
    });
    expect(() => parseState({ messageCount: 1 })).toThrow(/sessionId/);
  });

  it('tolerates get_state without a model: 1.x omits the field when none is selected, 0.85 sent null', () => {
    const base = {
      sessionId: 's1',
      sessionFile: '/x/s1.jsonl',
      messageCount: 0,
      isStreaming: false,
      thinkingLevel: 'off',
    };
    expect(parseState(base)).toEqual({ ...base, model: undefined });
    expect(parseState({ ...base, model: null })).toEqual({ ...base, model: undefined });
  });

  it('reads the disposition of an accepted prompt (pi ≥ 0.99), undefined when pi does not say (0.85)', () => {
    expect(promptDisposition({ disposition: 'handled' })).toBe('handled');
    expect(promptDisposition({ disposition: 'started' })).toBe('started');
    expect(promptDisposition({ disposition: 'queued' })).toBe('queued');
    expect(promptDisposition(undefined)).toBeUndefined();
    expect(promptDisposition({ disposition: 'something-new' })).toBeUndefined();
  });

  it('reads get_session_stats defensively', () => {
    const stats = parseSessionStats({
      tokens: { input: 10, output: 2, total: 12 },
      cost: 0.5,
      contextUsage: { tokens: null, contextWindow: 100, percent: null },
    });
    expect(stats.tokens).toEqual({ input: 10, output: 2, cacheRead: 0, cacheWrite: 0, total: 12 });
    expect(stats.cost).toBe(0.5);
    expect(stats.contextUsage).toEqual({ tokens: null, contextWindow: 100, percent: null });
  });
});
