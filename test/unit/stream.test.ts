// Fixtures are real `--mode json` streams captured against the scripted model with the project's socle: pi 0.85.1
// (the floor) under test/fixtures/pi/, pi 1.6.0 (the ceiling) under test/fixtures/pi-1.6/ (see their READMEs). The
// same reader must read both: 1.x adds a leading `role: "system"` message_end, `agent_settled.aborted` and
// `tool_execution_end.durationMs`, none of which may move a figure.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_COST, MAX_TOKENS } from '../../src/contract/numbers.js';
import { StreamReader, TurnObserver, argsDetail, readStream, toActivity, type PiEvent } from '../../src/pi/stream.js';

type FixtureDir = 'pi' | 'pi-1.6';

function fixture(name: string, dir: FixtureDir = 'pi'): string[] {
  return readFileSync(new URL(`../fixtures/${dir}/${name}.jsonl`, import.meta.url), 'utf8').split('\n');
}

function events(name: string, dir: FixtureDir): PiEvent[] {
  return fixture(name, dir)
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as PiEvent);
}

const line = (event: Record<string, unknown>) => JSON.stringify(event);

function assistantEnd(message: Record<string, unknown>): string {
  return line({ type: 'message_end', message: { role: 'assistant', content: [], ...message } });
}

const SOCLE_085 = ['damage-control', 'factory-guard', 'factory-inventory', 'factory-obs', 'factory-report'];
const SOCLE_160 = [
  'damage-control',
  'factory-compact',
  'factory-context',
  'factory-guard',
  'factory-inventory',
  'factory-obs',
  'factory-report',
];

/** What each recorded set holds (the figures are pi's own usage of those runs). */
const SETS = [
  {
    dir: 'pi' as const,
    name: '0.85',
    version: /^0\.85\.\d+$/,
    socle: SOCLE_085,
    gate: { tokens: 5642, cost: 0.017898, lines: 65 },
    textNoSocle: { tokens: 958, cost: 0.003294 },
    socleMissingPresent: SOCLE_085,
    settledAborted: undefined,
  },
  {
    dir: 'pi-1.6' as const,
    name: '1.6',
    version: /^1\.6\.\d+$/,
    socle: SOCLE_160,
    gate: { tokens: 8724, cost: 0.027144, lines: 69 },
    textNoSocle: { tokens: 1325, cost: 0.004395 },
    socleMissingPresent: SOCLE_160.filter((n) => n !== 'factory-compact'),
    settledAborted: false,
  },
];

describe.each(SETS)('readStream on captured pi $name streams', (set) => {
  it('gate run: envelope from report_phase, refused gate call, inventory, figures', () => {
    const s = readStream(fixture('gate', set.dir));
    expect(s.sessionId).toBe('cap-gate');
    expect(s.envelope).toEqual({
      status: 'success',
      summary: 'wrote notes.txt',
      changed_files: ['notes.txt'],
      artifacts: [],
    });
    expect(s.gateErrors).toHaveLength(1);
    expect(s.gateErrors[0]).toMatch(/^report_phase refused: status: .*"ok" received/);
    expect(s.inventory).toEqual({ pi_version: expect.stringMatching(set.version), present: set.socle, missing: [] });
    expect(s.model).toBe('scripted/alpha');
    expect(s.tokens).toBe(set.gate.tokens);
    expect(s.cost).toBe(set.gate.cost);
    expect(s.stopReason).toBe('toolUse');
    expect(s.errorMessage).toBeUndefined();
    expect(s.text).toBe('Let me check the shell first.');
    expect(s.turns).toBe(4);
    expect(s.toolCalls).toBe(4);
    expect(s.retries).toBe(0);
    expect(s.lines).toBe(set.gate.lines);
    expect(s.nonJson).toBe(0);
    expect(s.settledAborted).toBe(set.settledAborted);
  });

  it('usage is the sum of the assistant messages only, whatever other messages the stream carries', () => {
    const all = events('gate', set.dir);
    const assistants = all.filter(
      (e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'assistant',
    );
    const sum = assistants.reduce(
      (n, e) => n + ((e.message as { usage: { totalTokens: number } }).usage.totalTokens ?? 0),
      0,
    );
    expect(readStream(fixture('gate', set.dir)).tokens).toBe(sum);
  });

  it('text run without socle: no inventory, the final text with U+2028 intact', () => {
    const s = readStream(fixture('text-no-socle', set.dir));
    expect(s.inventory).toBeUndefined();
    expect(s.envelope).toBeUndefined();
    expect(s.text).toContain('cfg = { theme: "dark" }');
    expect(s.text).toContain('déjà vu \u2028 ok');
    expect(s.stopReason).toBe('stop');
    expect(s.tokens).toBe(set.textNoSocle.tokens);
    expect(s.cost).toBe(set.textNoSocle.cost);
  });

  it('provider outage: pi retried twice, last stopReason error with the provider message, zero usage', () => {
    const s = readStream(fixture('outage', set.dir));
    expect(s.retries).toBe(2);
    expect(s.stopReason).toBe('error');
    expect(s.errorMessage).toMatch(/^429: .*Rate limit exceeded/);
    expect(s.tokens).toBe(0);
    expect(s.cost).toBe(0);
    expect(s.text).toBe('');
    expect(s.turns).toBe(3);
  });

  it('missing socle extension is visible in the inventory', () => {
    const s = readStream(fixture('socle-missing', set.dir));
    expect(s.inventory?.missing).toEqual(['factory-compact']);
    expect(s.inventory?.present).toEqual(set.socleMissingPresent);
  });
});

describe('pi 1.x stream additions (test/fixtures/pi-1.6)', () => {
  it('the leading system message_end is streamed and changes neither text, usage nor model', () => {
    const all = events('gate', 'pi-1.6');
    const system = all.findIndex((e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'system');
    const user = all.findIndex((e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'user');
    expect(system).toBeGreaterThanOrEqual(0);
    expect(system).toBeLessThan(user);
    expect(toActivity(all[system]!)).toBeUndefined();
    const withoutSystem = fixture('gate', 'pi-1.6').filter((l) => !l.includes('"role":"system"'));
    const { lines: _a, ...withSystemFigures } = readStream(fixture('gate', 'pi-1.6'));
    const { lines: _b, ...withoutSystemFigures } = readStream(withoutSystem);
    expect(withSystemFigures).toEqual(withoutSystemFigures);
  });

  it('agent_settled.aborted is kept: true for the guard-aborted run, which ends stopReason aborted', () => {
    const s = readStream(fixture('aborted', 'pi-1.6'));
    expect(s.settledAborted).toBe(true);
    expect(s.stopReason).toBe('aborted');
    expect(s.errorMessage).toBe('This operation was aborted');
    expect(s.guardTrip).toBe(
      'factory-guard tripped — tool call limit reached: 1 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped',
    );
    expect(s.toolCalls).toBe(2);
  });

  it('tool_execution_end carries durationMs; the activity lines read the same as on 0.85', () => {
    const ends = events('gate', 'pi-1.6').filter((e) => e.type === 'tool_execution_end');
    expect(ends.filter((e) => typeof e.durationMs === 'number').map((e) => e.toolName)).toEqual(
      expect.arrayContaining(['bash', 'write']),
    );
    expect(ends.map((e) => toActivity(e))).toEqual([
      { kind: 'tool_end', tool: 'bash', isError: false, detail: 'héllo wörld ✓', callId: expect.any(String) },
      {
        kind: 'tool_end',
        tool: 'write',
        isError: false,
        detail: 'Successfully wrote to notes.txt',
        callId: expect.any(String),
      },
      {
        kind: 'tool_end',
        tool: 'report_phase',
        isError: true,
        detail: expect.stringMatching(/^report_phase refused/),
        callId: expect.any(String),
      },
      {
        kind: 'tool_end',
        tool: 'report_phase',
        isError: false,
        detail: 'Envelope delivered to the factory. Stop here.',
        callId: expect.any(String),
      },
    ]);
  });
});

describe('toActivity: a write the sandbox refused', () => {
  it('names the line of the output that says so (bash and node spell it differently); other outputs name none', () => {
    const end = (text: string) =>
      toActivity({
        type: 'tool_execution_end',
        toolName: 'bash',
        isError: true,
        result: { content: [{ type: 'text', text }] },
      } as PiEvent);
    expect(end('ok\nbash: line 1: /repo/computed.txt: Read-only file system\nrc=1')).toMatchObject({
      kind: 'tool_end',
      detail: 'ok',
      denied: 'bash: line 1: /repo/computed.txt: Read-only file system',
    });
    expect(end("Error: EROFS: read-only file system, open '/repo/x'")).toMatchObject({
      denied: "Error: EROFS: read-only file system, open '/repo/x'",
    });
    expect(end('all 12 tests passed')).not.toHaveProperty('denied');
  });
});

describe('StreamReader', () => {
  it('non-JSON lines are counted, never fatal; blank lines are ignored', () => {
    const reader = new StreamReader();
    expect(reader.feed('Warning: something on stdout')).toBeUndefined();
    expect(reader.feed('[1,2]')).toBeUndefined();
    expect(reader.feed('{"no_type": true}')).toBeUndefined();
    expect(reader.feed('{"type": "agent_start"')).toBeUndefined();
    expect(reader.feed('   ')).toBeUndefined();
    expect(reader.feed('{"type":"agent_start"}')).toEqual({ type: 'agent_start' });
    expect(reader.summary).toMatchObject({ lines: 5, nonJson: 4 });
  });

  it('cost is summed without float artefacts (1e-9 precision kept)', () => {
    const lines = [0.000025, 0.00005, 0.1, 0.2, 0.000000001].map((total) =>
      assistantEnd({ usage: { totalTokens: 10, cost: { total } } }),
    );
    const s = readStream(lines);
    expect(0.000025 + 0.00005).not.toBe(0.000075); // the artefact this guards against
    expect(s.cost).toBe(0.300075001);
    expect(s.tokens).toBe(50);
  });

  it('last non-empty assistant text wins; user and tool messages are ignored', () => {
    const s = readStream([
      assistantEnd({
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: ' part' },
        ],
      }),
      assistantEnd({ content: [{ type: 'toolCall', name: 'bash' }] }),
      line({ type: 'message_end', message: { role: 'user', content: [{ type: 'text', text: 'user says' }] } }),
      assistantEnd({ content: [{ type: 'text', text: '   ' }] }),
    ]);
    expect(s.text).toBe('first part');
  });

  it('model is the first observed provider/model; stopReason and errorMessage are the last', () => {
    const s = readStream([
      assistantEnd({
        provider: 'openrouter',
        model: 'z-ai/glm-5.3',
        stopReason: 'error',
        errorMessage: '503: overloaded',
      }),
      assistantEnd({ provider: 'other', model: 'x', stopReason: 'stop' }),
    ]);
    expect(s.model).toBe('openrouter/z-ai/glm-5.3');
    expect(s.stopReason).toBe('stop');
    // the error belonged to the first message; the turn finished cleanly afterwards
    expect(s.errorMessage).toBeUndefined();
  });

  it('report_phase: an error call feeds gateErrors, a later valid call gives the envelope; other tools are ignored', () => {
    const s = readStream([
      line({
        type: 'tool_execution_end',
        toolName: 'report_phase',
        isError: true,
        result: { content: [{ type: 'text', text: 'bad status' }] },
      }),
      line({
        type: 'tool_execution_end',
        toolName: 'bash',
        isError: false,
        result: { details: { status: 'success' } },
      }),
    ]);
    expect(s.envelope).toBeUndefined();
    expect(s.gateErrors).toEqual(['bad status']);
    const ok = readStream([
      line({
        type: 'tool_execution_end',
        toolName: 'report_phase',
        isError: false,
        result: { details: { status: 'fail' } },
      }),
    ]);
    expect(ok.envelope).toEqual({ status: 'fail' });
  });

  it('inventory is read tolerantly and only from factory-inventory entries', () => {
    const other = line({
      type: 'entry_appended',
      entry: { type: 'custom', customType: 'factory-obs', data: { pi_version: '9' } },
    });
    expect(readStream([other]).inventory).toBeUndefined();
    const asMessage = line({
      type: 'entry_appended',
      entry: {
        type: 'custom_message',
        customType: 'factory-inventory',
        details: { pi_version: '0.85.0', present: ['a', 3], missing: 'x' },
      },
    });
    expect(readStream([asMessage]).inventory).toEqual({ pi_version: '0.85.0', present: ['a'], missing: [] });
  });

  for (const dir of ['pi', 'pi-1.6'] as const) {
    it(`onAnswer fires once, at the answer's first streamed delta, long before its end (real ${dir} stream): the fan-out's followers go then`, () => {
      // pi's message_update carries a delta (assistantMessageEvent) and no message snapshot: a role check alone
      // never fired, and the arms waiting on a leader went only at its turn's end.
      const order: string[] = [];
      const observer = new TurnObserver({ onAnswer: () => order.push('answer') });
      for (const raw of fixture('gate', dir)) {
        const event = observer.take(raw);
        if (event?.type === 'message_update') order.push('update');
        if (event?.type === 'message_end' && (event.message as { role?: string }).role === 'assistant')
          order.push('end');
      }
      expect(order.filter((o) => o === 'answer')).toHaveLength(1);
      expect(order.indexOf('answer')).toBe(0); // before the first update is counted, so at the first token
      expect(order.indexOf('answer')).toBeLessThan(order.indexOf('end'));
      expect(order.filter((o) => o === 'end').length).toBeGreaterThan(1); // a turn of several calls: its end is far later
    });
  }

  it("a model call an extension made itself (the compaction narrator) counts like a turn's, and is reported as usage", () => {
    const usage: { tokens: number; cost: number }[] = [];
    const observer = new TurnObserver({ onUsage: (f) => usage.push(f) });
    const narrator = (data: Record<string, unknown>) =>
      line({ type: 'entry_appended', entry: { type: 'custom', customType: 'factory-usage', data } });
    observer.take(assistantEnd({ usage: { totalTokens: 100, input: 90, output: 10, cost: { total: 0.01 } } }));
    observer.take(
      narrator({ what: 'compaction', tokens: 40, cost: 0.004, input: 35, output: 5, cacheRead: 0, cacheWrite: 0 }),
    );
    // Bad figures are no call; another extension's entry is no usage.
    observer.take(narrator({ what: 'compaction', tokens: -5, cost: 'x' }));
    observer.take(
      line({
        type: 'entry_appended',
        entry: { type: 'custom', customType: 'factory-obs', data: { tokens: 999, cost: 9 } },
      }),
    );
    const s = observer.reader.summary;
    expect([s.tokens, s.cost]).toEqual([140, 0.014]);
    expect(s.calls.map((c) => c.cost)).toEqual([0.01, 0.004]);
    expect(usage).toEqual([
      { tokens: 100, cost: 0.01 },
      { tokens: 140, cost: 0.014 },
    ]);
  });

  it('the summary is a snapshot: later events do not change one already taken', () => {
    const reader = new StreamReader();
    reader.feed(assistantEnd({ usage: { totalTokens: 5 } }));
    const before = reader.summary;
    reader.feed(assistantEnd({ usage: { totalTokens: 7 } }));
    expect(before.tokens).toBe(5);
    expect(reader.summary.tokens).toBe(12);
  });

  it('figures stay finite and non-negative: a negative, junk or overflowing usage never poisons the totals', () => {
    // Raw lines, not JSON.stringify: `1e400` is what a stream can say and JSON.parse reads it as Infinity.
    const usage = (tokens: string, cost: string) =>
      `{"type":"message_end","message":{"role":"assistant","content":[],"usage":{"totalTokens":${tokens},"cost":{"total":${cost}}}}}`;
    const s = readStream([
      usage('100', '0.5'),
      usage('-40', '-0.25'),
      usage('"12"', 'null'),
      usage('1e400', '1e400'),
      usage('1e308', '1e308'),
    ]);
    expect(s.tokens).toBe(MAX_TOKENS);
    expect(s.cost).toBe(MAX_COST);
    const small = readStream([usage('100', '0.5'), usage('-40', '-0.25'), usage('"12"', '"0.1"')]);
    expect(small).toMatchObject({ tokens: 100, cost: 0.5 });
  });
});

describe('toActivity', () => {
  const events = fixture('gate')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PiEvent);
  const activities = events.map(toActivity).filter((a) => a !== undefined);

  it('maps a captured stream to tool starts/ends and texts, in order', () => {
    expect(activities.slice(0, 3)).toEqual([
      { kind: 'text', text: 'Let me check the shell first.' },
      { kind: 'tool_start', tool: 'bash', detail: 'echo "héllo wörld ✓"', callId: expect.any(String) },
      { kind: 'tool_end', tool: 'bash', isError: false, detail: 'héllo wörld ✓', callId: expect.any(String) },
    ]);
    // pi's toolCallId pairs each end with its start (src/bon/harvest/tried.ts names a refused call by it).
    const [start, end] = activities.slice(1, 3);
    expect(start?.kind === 'tool_start' && end?.kind === 'tool_end' && start.callId === end.callId).toBe(true);
    expect(activities).toContainEqual({
      kind: 'tool_start',
      tool: 'write',
      detail: 'notes.txt',
      callId: expect.any(String),
    });
    const gateEnds = activities.filter((a) => a.kind === 'tool_end' && a.tool === 'report_phase');
    expect(gateEnds.map((a) => a.kind === 'tool_end' && a.isError)).toEqual([true, false]);
  });

  it('maps auto_retry_start to a retry with the first line of the error', () => {
    const retry = fixture('outage')
      .filter((l) => l.includes('auto_retry_start'))
      .map((l) => toActivity(JSON.parse(l)));
    expect(retry[0]).toEqual({
      kind: 'retry',
      attempt: 1,
      message: '429: {"message":"Rate limit exceeded","type":"rate_limit_error","code":429}',
    });
  });

  it('details are one line and truncated', () => {
    const a = toActivity({
      type: 'tool_execution_start',
      toolName: 'bash',
      args: { command: `echo 1\n${'x'.repeat(300)}` },
    });
    expect(a?.kind).toBe('tool_start');
    const detail = a?.kind === 'tool_start' ? a.detail : '';
    expect(detail).not.toContain('\n');
    expect(detail.length).toBe(100);
    expect(detail.endsWith('…')).toBe(true);
    const text = toActivity({
      type: 'message_end',
      message: { role: 'assistant', content: [{ type: 'text', text: '\n\nfirst line\nsecond' }] },
    });
    expect(text).toEqual({ kind: 'text', text: 'first line' });
  });

  it('no line break of any kind reaches an activity, and cuts fall between code points', () => {
    const breaks = ['\r', '\v', '\f', '\u0085', '\u2028', '\u2029'];
    for (const brk of breaks) {
      const start = toActivity({
        type: 'tool_execution_start',
        toolName: `ba${brk}sh`,
        args: { command: `echo 1${brk}echo 2` },
      });
      expect(start).toEqual({ kind: 'tool_start', tool: 'ba sh', detail: 'echo 1 echo 2' });
      const text = toActivity({ type: 'message_end', message: { role: 'assistant', content: `first${brk}second` } });
      expect(text).toEqual({ kind: 'text', text: 'first' });
      const end = toActivity({
        type: 'tool_execution_end',
        toolName: 'bash',
        result: { content: `${brk}out${brk}more` },
      });
      expect(end?.kind === 'tool_end' && end.detail).toBe('out');
    }
    const emoji = toActivity({ type: 'tool_execution_start', toolName: 'bash', args: { command: '😀'.repeat(150) } });
    const detail = emoji?.kind === 'tool_start' ? emoji.detail : '';
    expect([...detail]).toHaveLength(100);
    expect(detail).toBe(`${'😀'.repeat(99)}…`);
  });

  it('ignores events without a display (updates, user messages, empty assistant text)', () => {
    expect(toActivity({ type: 'message_update' })).toBeUndefined();
    expect(toActivity({ type: 'message_end', message: { role: 'user', content: 'hi' } })).toBeUndefined();
    expect(toActivity({ type: 'message_end', message: { role: 'assistant', content: [] } })).toBeUndefined();
  });

  it('argsDetail picks the telling argument, else compact JSON', () => {
    expect(argsDetail({ path: 'src/a.ts', offset: 3 })).toBe('src/a.ts');
    expect(argsDetail({ pattern: 'TODO', path: 'src' })).toBe('TODO');
    expect(argsDetail({ command: '', path: 'x' })).toBe('x');
    expect(argsDetail({ a: 1 })).toBe('{"a":1}');
    expect(argsDetail(undefined)).toBe('');
  });
});

describe('factory-guard trips', () => {
  it('are read from the guard entry pi streams', () => {
    const trip = {
      type: 'entry_appended',
      entry: {
        type: 'custom',
        customType: 'factory-guard',
        data: { reason: 'factory-guard tripped — turn limit reached', turns: 3 },
        id: 'x',
        parentId: 'y',
      },
    };
    expect(readStream([JSON.stringify(trip)]).guardTrip).toBe('factory-guard tripped — turn limit reached');
    expect(readStream(['{"type":"agent_end"}']).guardTrip).toBeUndefined();
  });
});

describe('TurnObserver (json mode and RPC observe a turn the same way)', () => {
  for (const dir of ['pi', 'pi-1.6'] as const) {
    it(`on a recorded ${dir} stream: activity for each event that has one, usage once per change, at message_end only`, () => {
      const activities: string[] = [];
      const usage: number[] = [];
      const observer = new TurnObserver({
        onActivity: (a) => activities.push(a.kind),
        onUsage: (u) => usage.push(u.tokens),
      });
      const lines = fixture('gate', dir).filter((l) => l.trim() !== '');
      for (const l of lines) observer.take(l);
      const expected = events('gate', dir)
        .map(toActivity)
        .filter((a) => a !== undefined)
        .map((a) => a!.kind);
      expect(activities).toEqual(expected);
      expect(usage.length).toBeGreaterThan(0);
      expect(new Set(usage).size).toBe(usage.length); // never the same figure twice
      expect(usage.at(-1)).toBe(observer.reader.summary.tokens);
      // A repeated message_end with unchanged figures reports nothing more.
      const end = lines.filter((l) => l.includes('"message_end"')).at(-1)!;
      observer.take(end);
      expect(usage.at(-1)).toBe(observer.reader.summary.tokens);
    });
  }
});
