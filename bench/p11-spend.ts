// P11 (issue 13): spend control measured through the built CLI, real pi and the scripted model.
// - The forecast: `factory bon --json` on the demo payload (3 arms on 3 models, caching modelled), on a payload
//   whose primer reads ~4k tokens more (P9's notes file), and on one whose arms run a loud test suite several times
//   (its output grows their context each turn; they make more calls than the primer did). Each repo runs twice: the
//   forecast event (before any arm) against what the arms then spent, as the harvest ranks them. Goal: on the second
//   run (the first one's arms in factory.db) the forecast within 15 % of the spend; on the first, the spend within
//   the range the forecast showed.
// - A hard cap: every arm keeps calling cheap tools under `bon.arm_max_cost`; per arm, the model calls billed after
//   the one that crossed the cap. Goal: at most one (the call already in flight when the abort comes).
// Run alone: `node dist/bench/p11-spend.js` after `npm run build`, or through `npm run bench p11`.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FACTORY_BIN } from './cli.js';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../src/commands/demo.js';
import type { RunEvent } from '../src/contract/events.js';
import { DEFAULT_SCRIPTED_MODELS, makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel, type RecordedRequest } from '../src/scripted/server.js';
import { call, report, type Step, type Tapes } from '../src/scripted/tape.js';
import { verdictLine } from './timing.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SPEC = 'specs/farewell.md';
const FORECAST_GOAL = 0.15;

function run(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FACTORY_BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

const events = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunEvent);

/** `runs` bon runs one after the other in the same repo (a later one sees the earlier ones in factory.db). */
async function bench<T>(
  tapes: Tapes,
  files: Record<string, string>,
  flags: string[],
  read: (events: RunEvent[], requests: RecordedRequest[], run: number) => T,
  runs = 1,
): Promise<T[]> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p11-'));
  const model = await startScriptedModel({ tapes });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
      fs.writeFileSync(path.join(repo, name), text);
    }
    if (Object.keys(files).length > 0) {
      execFileSync('git', ['add', '-A'], { cwd: repo });
      execFileSync('git', ['commit', '-qm', 'bench files'], { cwd: repo });
    }
    const env = { ...process.env, ...agent.env, CI: 'true', FACTORY_WORKTREES: path.join(scratch, 'trees') };
    const results: T[] = [];
    for (let k = 0; k < runs; k += 1) {
      const seen = model.requests.length;
      const out = await run(['bon', SPEC, '--models', DEMO_MODELS.join(','), '--json', ...flags], repo, env);
      results.push(read(events(out.stdout), model.requests.slice(seen), k));
    }
    return results;
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

interface ForecastSample {
  name: string;
  /** False on a repo's first run (no past arm in factory.db to go by). */
  history: boolean;
  predicted: number;
  low: number;
  high: number;
  spent: number;
  /** predicted / spent: the goal is 0.85–1.15. */
  ratio: number;
  error: number;
  /** Each arm's forecast middle and what it spent, for the line of a miss. */
  arms: string;
}

function forecastOf(name: string) {
  return (evs: RunEvent[], _requests: RecordedRequest[], run: number): ForecastSample => {
    const forecast = evs.find((e): e is Extract<RunEvent, { type: 'forecast' }> => e.type === 'forecast');
    const harvest = evs.find((e): e is Extract<RunEvent, { type: 'harvest' }> => e.type === 'harvest');
    if (!forecast || !harvest) throw new Error(`${name}: the run printed no forecast or no harvest`);
    const f = forecast.forecast;
    const predicted = f.total.mid - f.primer;
    const spent = harvest.ranking.reduce((sum, r) => sum + r.cost, 0);
    const arms = f.perArm
      .map(
        (a) =>
          `arm ${a.arm} $${a.mid.toFixed(4)}/$${(harvest.ranking.find((r) => r.arm === a.arm)?.cost ?? 0).toFixed(4)}`,
      )
      .join(', ');
    return {
      name,
      history: run > 0,
      predicted,
      low: f.total.low - f.primer,
      high: f.total.high - f.primer,
      spent,
      ratio: predicted / spent,
      error: Math.abs(predicted - spent) / spent,
      arms,
    };
  };
}

/**
 * A tape played `times` over: one pass per run of the repo (the scripted model's cursor goes on across runs). A real
 * primer never answers twice alike, so a later pass's primer names the spec another way: its context is new to the
 * provider's cache, as it would be (the scripted cache keeps every prefix it served, across runs).
 */
const again = (tapes: Tapes, times: number): Tapes =>
  Object.fromEntries(
    Object.entries(tapes).map(([k, steps]) => [
      k,
      Array.from({ length: times }, (_, pass) =>
        k === 'model:alpha' && pass > 0
          ? [call('read', { path: `${'./'.repeat(pass)}${SPEC}` }), ...steps.slice(1)]
          : steps,
      ).flat(),
    ]),
  );

/** A repo whose suite prints a lot (~10k characters of TAP): every arm's test run grows its context by that much. */
function loudSuite(): string {
  const cases = Array.from(
    { length: 60 },
    (_, i) =>
      `test('greets person number ${i} by the full name, whatever its script or length (${'·'.repeat(40)})', () => {\n  assert.equal(greet('P${i}'), 'Hello, P${i}!');\n});\n`,
  );
  return `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../src/greet.js';\n\n${cases.join('')}`;
}

/** The arms of a repo with a test suite: each runs the tests before and after its change, as real arms do. */
function testingTapes(): Tapes {
  const demo = bonTapes(0);
  const file = (content: string) => ({ path: 'src/farewell.js', content });
  const built = {
    status: 'success',
    summary: 'farewell added, the suite passes',
    artifacts: [],
    notes_for_next_agent: '',
    changed_files: ['src/farewell.js'],
  };
  const tests = call('bash', { command: 'node --test 2>&1' });
  return {
    'model:alpha': [
      call('read', { path: 'specs/farewell.md' }),
      call('read', { path: 'test/farewell.test.js' }),
      call('read', { path: 'src/greet.js' }),
      demo['model:alpha']![1]!,
      call('write', file('export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n')),
      tests,
      report(built),
    ],
    'model:beta': [
      tests,
      call('write', file('export const farewell = (name) => `Goodbye, ${name}!`;\n')),
      tests,
      report(built),
    ],
    'model:gamma': [
      call('read', { path: 'test/greet.test.js' }),
      tests,
      call(
        'write',
        file('/** Says goodbye. */\nexport function farewell(name) {\n  return `Goodbye, ${String(name)}!`;\n}\n'),
      ),
      tests,
      tests,
      report(built),
    ],
  };
}

function notes(): string {
  const rows = ['# Farewells across locales', ''];
  for (let i = 0; rows.join('\n').length < 16_000; i += 1)
    rows.push(`| xx-${String(i).padStart(3, '0')} | Goodbye, {name} | formal register; the name is never translated |`);
  return `${rows.join('\n')}\n`;
}

const PRICES = new Map(DEFAULT_SCRIPTED_MODELS.map((m) => [`model:${m.id}`, m.cost]));

function usd(r: RecordedRequest): number {
  const p = PRICES.get(r.tape)!;
  const b = r.billed!;
  return ((b.prompt - b.cached) * p.input + b.cached * (p.cacheRead ?? p.input) + b.completion * p.output) / 1e6;
}

export interface P11Result {
  forecasts: ForecastSample[];
  overshoots: number[];
  ok: boolean;
}

export async function benchP11(): Promise<P11Result> {
  const demo = bonTapes(0);
  // Each repo twice: its first run has no past arm to go by, the second reads the first one's arms in factory.db.
  const forecasts = await bench(again(demo, 2), {}, [], forecastOf('demo'), 2);
  const reads = (tape: Step[]): Step[] => [tape[0]!, call('read', { path: 'docs/farewells.md' }), ...tape.slice(1)];
  const withNotes = {
    ...demo,
    'model:alpha': [...reads(demo['model:alpha']!.slice(0, 2)), ...demo['model:alpha']!.slice(2)],
  };
  forecasts.push(
    ...(await bench(again(withNotes, 2), { 'docs/farewells.md': notes() }, [], forecastOf('demo + 4k-token notes'), 2)),
  );
  forecasts.push(
    ...(await bench(
      again(testingTapes(), 2),
      { 'test/greet.test.js': loudSuite() },
      [],
      forecastOf('arms run a loud test suite'),
      2,
    )),
  );
  // The cap: each arm calls a cheap tool 40 times before its own steps; the cap lets about a dozen calls through.
  const CAP = 0.012;
  const busy = (steps: Step[]): Step[] => [
    ...Array.from({ length: 40 }, (_, i) => call('bash', { command: `echo ${i}` })),
    ...steps,
  ];
  const capped: Tapes = {
    'model:alpha': [...demo['model:alpha']!.slice(0, 2), ...busy(demo['model:alpha']!.slice(2))],
    'model:beta': busy(demo['model:beta']!),
    'model:gamma': busy(demo['model:gamma']!),
  };
  const roster =
    'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\nbon:\n  arm_max_cost: 0.012\n';
  const [overshoots = []] = await bench(
    capped,
    { 'adws/adw_config/factory.config.yaml': roster },
    [],
    (_evs, requests) => {
      const bySession = new Map<string, RecordedRequest[]>();
      for (const r of requests) if (r.session) bySession.set(r.session, [...(bySession.get(r.session) ?? []), r]);
      // The primer's session is the first alpha one; the arms' are the others.
      const primer = requests.find((r) => r.tape === 'model:alpha')?.session;
      return [...bySession.entries()]
        .filter(([session]) => session !== primer)
        .map(([, list]) => {
          let sum = 0;
          const crossing = list.findIndex((r) => (sum += usd(r)) >= CAP);
          return crossing < 0 ? 0 : list.length - (crossing + 1);
        });
    },
  );
  // The goal: within 15 % once the repo has a past run; on a first run, the spend within the range shown.
  const hit = (f: ForecastSample) => (f.history ? f.error <= FORECAST_GOAL : f.low <= f.spent && f.spent <= f.high);
  const ok = forecasts.every(hit) && overshoots.length === 3 && overshoots.every((n) => n <= 1);
  for (const f of forecasts) {
    console.log(
      `P11 forecast (${f.name}, ${f.history ? 'past run in factory.db' : 'first run'}): arms predicted $${f.predicted.toFixed(4)} ($${f.low.toFixed(4)}–$${f.high.toFixed(4)}), spent $${f.spent.toFixed(4)}: ratio ${f.ratio.toFixed(2)} ` +
        `(goal ${f.history ? `0.85–1.15` : 'spend within the range'}) ${hit(f) ? 'ok' : `MISSED (predicted/spent: ${f.arms})`}`,
    );
  }
  console.log(
    `P11 hard cap ($${CAP} per arm): model calls billed after the one that crossed it, per arm: ${overshoots.join(', ')} (goal ≤ 1 each) — ${verdictLine(ok)}`,
  );
  return { forecasts, overshoots, ok };
}

if (process.argv[1] && path.resolve(process.argv[1]) === THIS_FILE) {
  benchP11()
    .then((r) => {
      if (!r.ok) process.exitCode = 1;
    })
    .catch((error: unknown) => {
      console.error(`P11: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}
