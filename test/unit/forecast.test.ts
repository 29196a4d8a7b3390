// The fan-out forecast as a pure function over the primer's calls, the routes' prices, the tests' output and the
// arms of this repo's past runs; and the read-only query that finds those past arms in a real factory.db.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { armCost, armShape, forecastFanOut, testCalls } from '../../src/bon/spend/forecast.js';
import { workspacePaths } from '../../src/config/paths.js';
import { forecastLine } from '../../src/bon/spend/lines.js';
import { migrate } from '../../src/trace/schema.js';
import { pastArms } from '../../src/trace/pastArms.js';
import type { CallUsage } from '../../src/contract/agent.js';

const PRICES = { input: 3, output: 15, cacheRead: 0.3 };
const prices = new Map([
  ['p/m', PRICES],
  ['p/other', PRICES],
  ['p/new', PRICES],
]);

/**
 * A conversation billed as a caching provider bills it: each call's prompt is the previous prompt (read from the
 * cache) plus what was added since (the last answer and tool results, fresh). `start`: the first prompt, cached
 * but for `ask` tokens. `steps`: per call, what its tools returned, and the call's answer.
 */
function billed(
  start: number,
  ask: number,
  steps: ReadonlyArray<{ tool: number; output: number }>,
): { calls: CallUsage[]; usd: number } {
  const calls: CallUsage[] = [];
  let prompt = start;
  let fresh = ask;
  let usd = 0;
  for (const step of steps) {
    const call = { input: fresh, cacheRead: prompt - fresh, cacheWrite: 0, output: step.output, cost: 0 };
    call.cost = (call.input * PRICES.input + call.cacheRead * PRICES.cacheRead + call.output * PRICES.output) / 1e6;
    usd += call.cost;
    calls.push(call);
    fresh = step.output + step.tool;
    prompt += fresh;
  }
  return { calls, usd };
}

// The primer of a real library: it reads the spec and four files (1–3k tokens each), then reports its plan.
const primer = billed(2000, 2000, [
  { tool: 900, output: 60 },
  { tool: 2500, output: 60 },
  { tool: 1800, output: 60 },
  { tool: 3100, output: 60 },
  { tool: 0, output: 200 },
]).calls;
const context = primer.reduce((n, c) => Math.max(n, c.input + c.cacheRead), 0) + primer.at(-1)!.output;
const ASK = 150;
// What its arms do: run the suite (4k tokens of output), edit three files (the edit's text is the answer), run the
// suite again, fix one more, run it a third time, report: nine calls, most of the spend in the growing context.
const armSteps = (suite: number) => [
  { tool: suite, output: 40 },
  { tool: 30, output: 700 },
  { tool: 30, output: 500 },
  { tool: 30, output: 900 },
  { tool: suite, output: 40 },
  { tool: 30, output: 300 },
  { tool: suite, output: 40 },
  { tool: 0, output: 250 },
];
const arm = (suite: number) => billed(context + ASK, ASK, armSteps(suite));

describe('the forecast of a fan-out', () => {
  it("with past arms of this repo, an arm's spend is forecast within 15 % (the primer alone is off by more)", () => {
    // Last week's run of the same repo forked from a shorter primer (another spec): its arms' calls still tell.
    const past = [
      billed(9000, ASK, armSteps(4000)).calls,
      billed(9000, ASK, armSteps(4200)).calls,
      billed(9000, ASK, armSteps(3800)).calls,
    ];
    const actual = arm(4000).usd;
    const base = {
      calls: primer,
      primerCost: 0,
      primerModel: 'p/m',
      arms: [{ arm: 1, model: 'p/m' }],
      prices,
      askTokens: ASK,
    };
    const blind = forecastFanOut(base).perArm[0]!;
    expect(Math.abs(blind.mid - actual) / actual).toBeGreaterThan(0.15);
    const told = forecastFanOut({ ...base, history: past.map((calls) => ({ model: 'p/m', calls })) }).perArm[0]!;
    expect(told.mid / actual).toBeGreaterThan(0.85);
    expect(told.mid / actual).toBeLessThan(1.15);
    expect(told.low).toBeLessThanOrEqual(actual);
    expect(told.high).toBeGreaterThanOrEqual(actual);
  });

  it('the range spans what the past arms did; their median is the middle', () => {
    const short = billed(9000, ASK, armSteps(500).slice(0, 3)).calls;
    const long = billed(9000, ASK, [...armSteps(4000), ...armSteps(4000)]).calls;
    const middle = billed(9000, ASK, armSteps(2000)).calls;
    const f = forecastFanOut({
      calls: primer,
      primerCost: 0.01,
      primerModel: 'p/m',
      arms: [{ arm: 1, model: 'p/m' }],
      prices,
      askTokens: ASK,
      history: [short, long, middle].map((calls) => ({ model: 'p/m', calls })),
    });
    const only = (calls: CallUsage[]) =>
      forecastFanOut({
        calls: primer,
        primerCost: 0,
        primerModel: 'p/m',
        arms: [{ arm: 1, model: 'p/m' }],
        prices,
        askTokens: ASK,
        history: [{ model: 'p/m', calls }],
      }).perArm[0]!.mid;
    // Arm 1 runs on the primer's model: its first call is cached; the range also spans one that finds nothing cached.
    expect(f.perArm[0]).toMatchObject({ low: only(short), mid: only(middle) });
    expect(f.perArm[0]!.high).toBeGreaterThan(only(long));
    expect(f.total.low).toBeCloseTo(0.01 + only(short), 6);
    expect(f.basis).toContain('3 past arm(s) of this repo');
    // The line the log and the board show: the range, and what it went by.
    expect(forecastLine({ type: 'forecast', adwId: 'x', ts: 0, forecast: f })).toMatch(
      /^forecast: 1 arm\(s\) ~\$[\d.]+ \(\$[\d.]+–\$[\d.]+\) after the primer's \$0\.0100, run ~\$[\d.]+ · by 3 past arm\(s\)$/,
    );
  });

  it('an arm goes by past arms on its own route, by every past arm when its route has none', () => {
    const cheap = billed(9000, ASK, armSteps(100).slice(0, 2)).calls;
    const dear = billed(9000, ASK, armSteps(4000)).calls;
    const history = [
      { model: 'p/m', calls: cheap },
      { model: 'p/other', calls: dear },
    ];
    const f = forecastFanOut({
      calls: primer,
      primerCost: 0,
      primerModel: 'p/m',
      arms: [
        { arm: 1, model: 'p/m' },
        { arm: 2, model: 'p/other' },
        { arm: 3, model: 'p/new' },
      ],
      prices,
      askTokens: ASK,
      history,
    });
    expect(f.perArm[0]!.mid).toBeLessThan(f.perArm[1]!.mid);
    expect(f.perArm[2]!.low).toBeLessThan(f.perArm[2]!.high);
  });

  it("with no past arm, the tests' output on HEAD grows the forecast: an arm runs them before and after its change, more often at the high end", () => {
    const base = {
      calls: primer,
      primerCost: 0,
      primerModel: 'p/m',
      arms: [{ arm: 1, model: 'p/m' }],
      prices,
      askTokens: ASK,
    };
    const silent = forecastFanOut(base);
    const loud = forecastFanOut({ ...base, testOutputTokens: 4000 });
    expect(loud.perArm[0]!.mid).toBeGreaterThan(silent.perArm[0]!.mid);
    expect(forecastLine({ type: 'forecast', adwId: 'x', ts: 0, forecast: loud })).toMatch(
      / · no past run: by the primer$/,
    );
    expect(loud.basis).toMatch(
      /8 call\(s\) \(the tests run twice: ~4000 tokens of output each\), 3–16 for the range; no past arm/,
    );
    for (const a of loud.perArm) expect(a.low < a.mid && a.mid < a.high).toBe(true);
    // Each run's output is fresh once, then resent in every later call: two runs weigh more than one, earlier more.
    const shape = armShape(primer, ASK);
    const p = prices.get('p/m')!;
    expect(armCost(shape, p, 5, ASK, true, 4000, 0, 2)).toBeGreaterThan(armCost(shape, p, 5, ASK, true, 4000, 0, 1));
    expect([...testCalls(5, 1)]).toEqual([4]);
    expect([...testCalls(5, 2)]).toEqual([2, 4]);
    expect([...testCalls(1, 2)]).toEqual([]);
  });
});

describe('a first run, with no past arm', () => {
  it("reckons an arm's own work, not the primer's reading: a primer that read in one call does not make a one-call arm", () => {
    // The day-one trial: the primer read everything in one call; the arms then made four to ten calls each and spent
    // 4–7× what a one-call arm was forecast. The range must hold that.
    const one: CallUsage[] = [{ input: 9000, output: 300, cacheRead: 0, cacheWrite: 0, cost: 0.01 }];
    const f = forecastFanOut({
      calls: one,
      primerCost: 0.01,
      primerModel: 'p/m',
      arms: [{ arm: 1, model: 'p/m' }],
      prices,
      askTokens: ASK,
      testOutputTokens: 800,
    });
    const a = f.perArm[0]!;
    const shape = armShape(one, ASK);
    const p = prices.get('p/m')!;
    const oneCall = armCost(shape, p, 1, ASK, true, 800, 0, 2);
    for (const calls of [4, 10]) {
      const spent = armCost(shape, p, calls, ASK, true, 800, 0, 2);
      expect(a.low).toBeLessThanOrEqual(spent);
      expect(a.high).toBeGreaterThanOrEqual(spent);
    }
    expect(a.mid).toBeGreaterThan(4 * oneCall);
    expect(a.low < a.mid && a.mid < a.high).toBe(true);
    expect(f.basis).toMatch(/over ~6 call\(s\).*2–16 for the range/);
  });
});

describe('past arms in factory.db', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads each finished arm's assistant calls of the last best-of-N runs, in order, and only those", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-pastarms-'));
    made.push(root);
    const paths = workspacePaths(root);
    expect(pastArms(paths)).toEqual([]);
    fs.mkdirSync(paths.dataDir, { recursive: true });
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    const db = new Database(path.join(paths.dataDir, 'factory.db'));
    migrate(db);
    const usage = (input: number, output: number) =>
      JSON.stringify({
        message_role: 'assistant',
        usage: { input, output, cacheRead: 10, cacheWrite: 0, cost: { total: 0.001 } },
      });
    db.prepare(
      `INSERT INTO runs (adw_id, adw_name, started_at, status) VALUES ('b1', 'adw_bon', '2026-01-01', 'green'), ('b2', 'adw_bon', '2026-01-02', 'running'), ('p1', 'adw_prompt', '2026-01-03', 'green')`,
    ).run();
    const phase = db.prepare(
      `INSERT INTO phases (adw_id, seq, name, kind, status, model) VALUES (?, ?, ?, 'agent', ?, ?)`,
    );
    phase.run('b1', 0, 'prime', 'ok', 'p/m');
    phase.run('b1', 1, 'arm_1', 'ok', 'p/m');
    phase.run('b1', 2, 'arm_2', 'failed', 'p/o');
    phase.run('b2', 1, 'arm_1', 'running', 'p/m');
    phase.run('p1', 1, 'arm_1', 'ok', 'p/m');
    const session = db.prepare(`INSERT INTO sessions (session_id, adw_id, phase) VALUES (?, ?, ?)`);
    const line = db.prepare(`INSERT INTO harness_events (session_id, line_no, type, payload) VALUES (?, ?, ?, ?)`);
    for (const [id, adw, ph] of [
      ['s0', 'b1', 'prime'],
      ['s1', 'b1', 'arm_1'],
      ['s2', 'b1', 'arm_2'],
      ['s3', 'b2', 'arm_1'],
      ['s4', 'p1', 'arm_1'],
    ] as const) {
      session.run(id, adw, ph);
      line.run(id, 1, 'message_end', usage(100, 5));
      line.run(id, 2, 'message_end', JSON.stringify({ message_role: 'toolResult', tool_name: 'bash' }));
      line.run(id, 3, 'tool_start', JSON.stringify({ tool_name: 'bash' }));
      line.run(id, 4, 'message_end', usage(300, 7));
    }
    db.close();
    const call = (input: number, output: number) => ({ input, output, cacheRead: 10, cacheWrite: 0, cost: 0.001 });
    expect(pastArms(paths)).toEqual([
      { adwId: 'b1', phase: 'arm_1', model: 'p/m', calls: [call(100, 5), call(300, 7)] },
      { adwId: 'b1', phase: 'arm_2', model: 'p/o', calls: [call(100, 5), call(300, 7)] },
    ]);
  });
});
