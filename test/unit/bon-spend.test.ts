// The spend watch as a fold of usage reports (caps, the soft cap's one word, a race ended by greens), the flags'
// readers, the forecast's arithmetic and the notifications' bytes. The same paths through the real pi are in
// test/e2e/bon-spend.test.ts.
import { describe, expect, it } from 'vitest';
import { parseDuration, formatDuration } from '../../src/contract/duration.js';
import { armCost, armShape, forecastFanOut } from '../../src/bon/spend/forecast.js';
import { formatCap, parseUsd, SpendWatch, type Reservation, type SpendNote } from '../../src/bon/spend/watch.js';
import { notificationBytes, notificationKind, notificationOf } from '../../src/tui/notify.js';
import Database from 'better-sqlite3';
import { startBudgetServer } from '../../src/bon/spend/budgetServer.js';
import { askGate, installSpendGate } from '../../.pi/lib/spend-gate.js';
import { runStatus } from '../../src/trace/fold.js';
import { MIGRATIONS, migrate } from '../../src/trace/schema.js';
import type { StopOrder } from '../../src/contract/errors.js';
import { stopOrderOf } from '../../src/contract/errors.js';

function watch(policy: ConstructorParameters<typeof SpendWatch>[0]) {
  const notes: SpendNote[] = [];
  const stops: StopOrder[] = [];
  const w = new SpendWatch(policy, { stopBatch: (o) => stops.push(o), note: (n) => notes.push(n) });
  const levers = (arm: number) => {
    const got = { steers: [] as string[], stops: [] as StopOrder[] };
    w.begin(arm, { steer: (t) => got.steers.push(t), stop: (o) => got.stops.push(o) });
    return got;
  };
  return { w, notes, stops, levers };
}

describe('SpendWatch', () => {
  it("an arm's cap: one wrap-up word at 80 %, then a budget stop at the cap", () => {
    const { w, notes, levers } = watch({ armMaxCost: 1 });
    const arm = levers(1);
    for (const cost of [0.3, 0.79, 0.8, 0.85, 0.99]) w.armUsage(1, cost);
    expect(arm.steers).toHaveLength(1);
    expect(arm.steers[0]).toMatch(
      /^Budget notice from the factory: this attempt has spent \$0\.8000 of its \$1 cap\. Wrap up now/,
    );
    expect(arm.stops).toEqual([]);
    w.armUsage(1, 1.02);
    expect(arm.stops).toEqual([{ kind: 'budget', motif: 'budget: the arm spent $1.02, its cap is $1' }]);
    expect(notes.map((n) => n.kind)).toEqual(['wrap_up', 'capped']);
  });

  it("the run's cap counts the primer and every arm; at 80 % every arm at work is told, at the cap the batch stops once", () => {
    const { w, stops, levers } = watch({ maxCost: 1 });
    w.primerUsage(0.4);
    const a = levers(1);
    const b = levers(2);
    w.armUsage(1, 0.2);
    w.armUsage(2, 0.2);
    expect(a.steers.length + b.steers.length).toBe(2);
    w.armUsage(1, 0.45);
    w.armUsage(2, 0.5);
    expect(stops).toHaveLength(1);
    expect(stops[0]!.kind).toBe('budget');
    expect(w.exhausted).toMatch(/^budget: the run spent \$1\.05\d*, its cap is \$1 \(--max-cost\)/);
  });

  it('a raised cap holds the arm to the new figure, with a new wrap-up word', () => {
    const { w, levers } = watch({ armMaxCost: 1 });
    const arm = levers(1);
    w.armUsage(1, 1.1);
    w.raise(1, 2);
    w.armUsage(1, 1.7);
    // Past the first cap in one call (no word then), told at 80 % of the new one.
    expect(arm.steers).toHaveLength(1);
    expect(arm.steers[0]).toContain('of its $2 cap');
    expect(arm.stops).toHaveLength(1);
    expect(w.capOf(1)).toBe(2);
  });

  it('--stop-after-green k: the k-th green arm stops the batch; red arms do not count', () => {
    const { w, stops } = watch({ stopAfterGreen: 2 });
    w.armSettled(1, false, 0.1);
    w.armSettled(2, true, 0.1);
    expect(stops).toEqual([]);
    w.armSettled(3, true, 0.1);
    expect(stops).toEqual([{ kind: 'race', motif: 'stopped: 2 arms already green (--stop-after-green 2)' }]);
  });

  it("the run's cap is held before each call: room for a call beside the ones in flight, else it waits; the last goes alone", async () => {
    const { w, stops, notes } = watch({ maxCost: 1 });
    const first = await w.reserve('prime');
    expect(first.ok).toBe(true);
    w.settle((first as { id: string }).id, 0.3);
    // The dearest call seen is $0.30: each reservation holds $0.45 of the room.
    const a = await w.reserve('arm_1');
    expect(a.ok).toBe(true);
    let b: Reservation | undefined;
    void w.reserve('arm_2').then((r) => (b = r));
    let c: Reservation | undefined;
    void w.reserve('arm_3').then((r) => (c = r));
    await Promise.resolve();
    // $0.30 spent + $0.45 held + $0.45 asked passes the cap: arm 2 waits for arm 1's call.
    expect([b, c]).toEqual([undefined, undefined]);
    expect(w.inFlight('arm_1')).toBe(true);
    w.settle((a as { id: string }).id, 0.3);
    await Promise.resolve();
    // $0.60 spent, nothing in flight: arm 2's call goes alone (it may pass the cap: by one call at most).
    expect(b?.ok).toBe(true);
    expect(c).toBeUndefined();
    w.settle((b as { id: string }).id, 0.45);
    await Promise.resolve();
    expect(c).toEqual({ ok: false, reason: 'budget: the run reached its cap of $1 (--max-cost) — the batch stopped' });
    expect(stops).toEqual([
      { kind: 'budget', motif: 'budget: the run reached its cap of $1 (--max-cost) — the batch stopped' },
    ]);
    expect(w.toolRefusal()).toBe(stops[0]!.motif);
    expect(await w.reserve('arm_1')).toEqual({ ok: false, reason: stops[0]!.motif });
    // The figure said once, with every call in.
    expect(notes.filter((n) => n.kind === 'capped')).toEqual([
      {
        kind: 'capped',
        spent: 1.05,
        cap: 1,
        scope: 'run',
        motif: 'budget: the run spent $1.05, its cap is $1 (--max-cost)',
      },
    ]);
  });

  it('a cap crossed while calls are in flight: their stop waits for them, the figure is said once they are in', async () => {
    const { w, notes, stops } = watch({ maxCost: 1 });
    const a = (await w.reserve('arm_1')) as { id: string };
    const b = (await w.reserve('arm_2')) as { id: string };
    const stopped: string[] = [];
    w.settle(a.id, 1.2);
    expect(stops).toHaveLength(1);
    // arm 2's call is in flight: it is stopped when it comes in, not cut.
    w.stopAfterCall('arm_1', () => stopped.push('arm_1'));
    w.stopAfterCall('arm_2', () => stopped.push('arm_2'));
    expect(stopped).toEqual(['arm_1']);
    expect(notes.some((n) => n.kind === 'capped')).toBe(false);
    expect(w.toolRefusal()).toBeDefined();
    w.settle(b.id, 0.1);
    expect(stopped).toEqual(['arm_1', 'arm_2']);
    expect(notes.filter((n) => n.kind === 'capped').map((n) => n.spent)).toEqual([1.3]);
    expect(w.exhausted).toBe('budget: the run spent $1.30, its cap is $1 (--max-cost)');
  });

  it('a node whose attempt ended gives back what it held and is refused what it waited for', async () => {
    const { w } = watch({ maxCost: 1 });
    w.settle(((await w.reserve('prime')) as { id: string }).id, 0.4);
    const a = await w.reserve('arm_1');
    expect(a.ok).toBe(true);
    const waiting = w.reserve('arm_2');
    const also = w.reserve('arm_1');
    w.release('arm_1', 'the attempt was stopped');
    expect(await also).toEqual({ ok: false, reason: 'the attempt was stopped' });
    // arm 1's room went back: arm 2 gets its call.
    expect((await waiting).ok).toBe(true);
    expect(w.inFlight('arm_1')).toBe(false);
  });

  it('the deadline runs on the injected clock; a race stop refuses every later call and tool', async () => {
    const { w, stops } = watch({ deadlineMs: 9000 });
    let fire: (() => void) | undefined;
    w.clock = (ms, go) => {
      expect(ms).toBe(9000);
      fire = go;
      return () => undefined;
    };
    w.start();
    expect(stops).toEqual([]);
    expect(w.toolRefusal()).toBeUndefined();
    fire!();
    expect(stops).toEqual([{ kind: 'race', motif: "stopped: the run's deadline (9s) passed" }]);
    expect(w.toolRefusal()).toBe("stopped: the run's deadline (9s) passed");
    expect(await w.reserve('arm_1')).toEqual({ ok: false, reason: "stopped: the run's deadline (9s) passed" });
  });

  it('a signal aborted with a stop order says its motif and kind; a bare abort does not', () => {
    const c = new AbortController();
    c.abort({ motif: 'budget: x', kind: 'budget' });
    expect(stopOrderOf(c.signal.reason)).toEqual({ motif: 'budget: x', kind: 'budget' });
    const bare = new AbortController();
    bare.abort();
    expect(stopOrderOf(bare.signal.reason)).toBeUndefined();
  });
});

describe('flag readers', () => {
  it.each([
    ['90s', 90_000],
    ['20m', 1_200_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    [' 2M ', 120_000],
  ])('duration %j → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'soon', '-5m', '0s', '5', 'm5', '1h 30m', '5 min'])('not a duration: %j', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );

  it('durations and caps written back as people write them', () => {
    expect(formatDuration(9000)).toBe('9s');
    expect(formatDuration(5_400_000)).toBe('90m');
    expect(formatCap(0.03)).toBe('$0.03');
    expect(formatCap(2.5)).toBe('$2.5');
  });

  it.each([
    ['0.5', 0.5],
    ['$2', 2],
    ['1e-2', 0.01],
    ['.25', 0.25],
  ])('dollars %j → %d', (text, usd) => expect(parseUsd('--max-cost', text)).toBe(usd));

  it.each(['-1', '0', 'lots', '', 'NaN', 'Infinity', '1,5', '0x10'])('not an amount: %j', (text) => {
    expect(parseUsd('--max-cost', text)).toEqual({
      motif: `--max-cost takes a positive amount of dollars, e.g. --max-cost 0.50 (got ${JSON.stringify(text)})`,
    });
  });
});

describe('forecast', () => {
  const calls = [
    { input: 3000, output: 50, cacheRead: 0, cacheWrite: 0, cost: 0 },
    { input: 200, output: 80, cacheRead: 3000, cacheWrite: 0, cost: 0 },
  ];
  const prices = new Map([
    ['p/warm', { input: 3, output: 15, cacheRead: 0.3 }],
    ['p/cold', { input: 1, output: 5, cacheRead: 0.1 }],
  ]);

  it("reckons an arm's shape from the primer's calls: its context at the fork, growth per call, answer size", () => {
    expect(armShape(calls, 100)).toEqual({ context: 3280, growth: 130, output: 65, calls: 2 });
  });

  it("the first arm on the primer's model reads the context cached; the first on another model pays it in full, the next does not", () => {
    const f = forecastFanOut({
      calls,
      primerCost: 0.01,
      primerModel: 'p/warm',
      arms: [
        { arm: 1, model: 'p/warm' },
        { arm: 2, model: 'p/cold' },
        { arm: 3, model: 'p/cold' },
      ],
      prices,
      askTokens: 100,
    });
    const shape = armShape(calls, 100);
    // No past arm: six calls (the primer's two, three more, six at least).
    expect(f.perArm[0]!.mid).toBeCloseTo(armCost(shape, prices.get('p/warm')!, 6, 100, true), 6);
    expect(f.perArm[1]!.mid).toBeCloseTo(armCost(shape, prices.get('p/cold')!, 6, 100, false), 6);
    expect(f.perArm[2]!.mid).toBeCloseTo(armCost(shape, prices.get('p/cold')!, 6, 100, true), 6);
    expect(f.perArm[1]!.mid).toBeGreaterThan(f.perArm[2]!.mid);
    expect(f.total.mid).toBeCloseTo(0.01 + f.perArm.reduce((s, a) => s + a.mid, 0), 6);
    for (const a of f.perArm) expect([a.low <= a.mid, a.mid <= a.high]).toEqual([true, true]);
  });

  it("a route without a price is priced as the primer's calls were", () => {
    const f = forecastFanOut({
      calls,
      primerCost: 0.0066,
      arms: [{ arm: 1, model: 'x/unknown' }],
      prices: new Map(),
      askTokens: 0,
    });
    expect(f.perArm[0]!.mid).toBeGreaterThan(0);
  });
});

describe('notifications', () => {
  it('the terminal decides: OSC 9, OSC 777, or the bell alone (tmux, unknown terminals)', () => {
    expect(notificationKind({ TERM_PROGRAM: 'iTerm.app' })).toBe('osc9');
    expect(notificationKind({ WT_SESSION: 'x' })).toBe('osc9');
    expect(notificationKind({ VTE_VERSION: '7600' })).toBe('osc777');
    expect(notificationKind({ TERM_PROGRAM: 'iTerm.app', TMUX: '/tmp/t,1,0' })).toBe('bell');
    expect(notificationKind({ TERM: 'xterm-256color' })).toBe('bell');
  });

  it('a hostile text cannot close the sequence or start another', () => {
    const bytes = notificationBytes('arm_2\u0007\u001b]0;pwned\u0007 done; ok', { TERM_PROGRAM: 'WezTerm' });
    expect(bytes).toBe('\u0007\u001b]9;factory: arm_2 ]0 pwned done ok\u0007');
    expect(notificationBytes('x', { VTE_VERSION: '1' })).toBe('\u0007\u001b]777;notify;factory;x\u0007');
  });

  it('a run that ends, an arm paused at its cap and a forecast that asks are told; other events are not', () => {
    const base = { adwId: 'a1', ts: 0 };
    expect(notificationOf({ ...base, type: 'run_finished', exit: 0, seconds: 1, tokens: 1, cost: 0 })).toBe(
      'run a1 green',
    );
    expect(
      notificationOf({ ...base, type: 'run_finished', exit: 3, seconds: 1, tokens: 1, cost: 0, budget: 'b' }),
    ).toBe('run a1 stopped by its budget');
    expect(
      notificationOf({
        ...base,
        type: 'spend',
        phase: 'arm_2',
        arm: 2,
        kind: 'paused',
        spent: 1,
        cap: 1,
        scope: 'arm',
      }),
    ).toMatch(/^arm_2 paused at its cap/);
    expect(
      notificationOf({ ...base, type: 'spend', arm: 2, kind: 'wrap_up', spent: 1, cap: 1, scope: 'arm' }),
    ).toBeUndefined();
  });
});

describe('the spend gate over the loopback (the node side is .pi/lib/spend-gate.ts)', () => {
  it('a node reserves, gives back its cost and asks for tools; a stop refuses both; a wrong address is refused', async () => {
    const { w, stops } = watch({ maxCost: 1 });
    const server = await startBudgetServer(w);
    try {
      const got = await askGate(server.url, 'reserve', { key: 'arm_1' });
      expect(got).toEqual({ ok: true, id: 'r1' });
      expect(w.inFlight('arm_1')).toBe(true);
      expect(await askGate(server.url, 'tool', { key: 'arm_1' })).toEqual({ ok: true });
      expect(await askGate(server.url, 'settle', { key: 'arm_1', id: 'r1', cost: 1.5 })).toEqual({ ok: true });
      expect(stops.map((s) => s.kind)).toEqual(['budget']);
      expect(await askGate(server.url, 'tool', { key: 'arm_2' })).toEqual({ ok: false, reason: stops[0]!.motif });
      expect(await askGate(server.url, 'reserve', { key: 'arm_2' })).toEqual({ ok: false, reason: stops[0]!.motif });
      const wrong = await askGate(server.url.replace(/[0-9a-f]{32}$/, '0'.repeat(32)), 'reserve', { key: 'x' });
      expect(wrong).toEqual({ ok: false, reason: 'not the spend gate' });
    } finally {
      await server.close();
    }
    // The cockpit gone: the node's ask fails closed.
    const gone = await askGate(server.url, 'reserve', { key: 'x' });
    expect(gone.ok).toBe(false);
  });

  it('a reservation granted before the batch stopped carries no request past the stop: at go it goes back, refused', async () => {
    const { w, stops } = watch({ maxCost: 1, stopAfterGreen: 1 });
    const server = await startBudgetServer(w);
    try {
      const handlers = new Map<string, (...args: unknown[]) => unknown>();
      installSpendGate(
        { on: (event: string, handler: (...args: unknown[]) => unknown) => void handlers.set(event, handler) } as never,
        { FACTORY_BUDGET_URL: server.url, FACTORY_PHASE: 'arm_3' },
      );
      let aborted = 0;
      const ctx = { abort: () => (aborted += 1) };
      await handlers.get('turn_start')!({}, ctx);
      expect(w.inFlight('arm_3')).toBe(true);
      // Before the stop, go goes.
      await handlers.get('before_provider_request')!({}, ctx);
      expect(aborted).toBe(0);
      await handlers.get('message_end')!({ message: { role: 'assistant', usage: { cost: { total: 0.1 } } } });
      // The next turn is granted; the batch stops while its request is being built: it never leaves.
      await handlers.get('turn_start')!({}, ctx);
      expect(w.inFlight('arm_3')).toBe(true);
      w.armSettled(1, true, 0.1); // another arm is green: --stop-after-green 1 stops the batch
      expect(stops.map((o) => o.kind)).toEqual(['race']);
      expect(await handlers.get('before_provider_request')!({}, ctx)).toBeUndefined();
      expect(aborted).toBe(1);
      expect(w.inFlight('arm_3')).toBe(false);
      expect(await askGate(server.url, 'go', { key: 'arm_3', id: 'r9' })).toEqual({
        ok: false,
        reason: w.stopped!.motif,
      });
    } finally {
      await server.close();
    }
  });

  it('the node aborts a refused turn before its request and blocks every tool after it; nothing is asked without the address', async () => {
    const handlers = new Map<string, (...args: unknown[]) => unknown>();
    const pi = { on: (event: string, handler: (...args: unknown[]) => unknown) => void handlers.set(event, handler) };
    installSpendGate(pi as never, {});
    expect(handlers.size).toBe(0);
    const { w } = watch({ maxCost: 1 });
    const server = await startBudgetServer(w);
    try {
      installSpendGate(pi as never, { FACTORY_BUDGET_URL: server.url, FACTORY_PHASE: 'arm_2' });
      let aborted = 0;
      await handlers.get('turn_start')!({}, { abort: () => (aborted += 1) });
      expect([aborted, w.inFlight('arm_2')]).toEqual([0, true]);
      await handlers.get('message_end')!({ message: { role: 'assistant', usage: { cost: { total: 2 } } } });
      expect(w.inFlight('arm_2')).toBe(false);
      await handlers.get('turn_start')!({}, { abort: () => (aborted += 1) });
      expect(aborted).toBe(1);
      expect(await handlers.get('tool_call')!()).toEqual({ block: true, reason: w.stopped!.motif });
    } finally {
      await server.close();
    }
  });
});

describe('a run a cap stopped, in the trace', () => {
  it('exit 3 is `budget`, and a v2 store lists its exit-3 runs so once migrated', () => {
    expect(runStatus(3)).toBe('budget');
    expect(runStatus(1)).toBe('failed');
    const db = new Database(':memory:');
    try {
      db.exec(MIGRATIONS[0]!);
      db.exec(MIGRATIONS[1]!);
      db.pragma('user_version = 2');
      db.prepare(
        "INSERT INTO runs (adw_id, status, exit_code) VALUES ('aaaa0001', 'failed', 3), ('aaaa0002', 'failed', 1)",
      ).run();
      migrate(db);
      expect(db.prepare('SELECT adw_id, status FROM runs ORDER BY adw_id').all()).toEqual([
        { adw_id: 'aaaa0001', status: 'budget' },
        { adw_id: 'aaaa0002', status: 'failed' },
      ]);
      db.prepare("INSERT INTO runs (adw_id, status) VALUES ('aaaa0003', 'budget')").run();
    } finally {
      db.close();
    }
  });
});
