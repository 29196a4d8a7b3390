// P11 (issue 13): spend control measured through the built CLI, real pi and the scripted model.
// - The forecast: `factory bon --json` on the demo payload (3 arms on 3 models, caching modelled) and on a payload
//   whose primer reads ~4k tokens more (P9's notes file); the forecast event (before any arm) against what the arms
//   then spent, as the harvest ranks them. Goal: the error ≤ 15 % of the real spend of the arms.
// - A hard cap: every arm keeps calling cheap tools under `bon.arm_max_cost`; per arm, the model calls billed after
//   the one that crossed the cap. Goal: at most one (the call already in flight when the abort comes).
// Run alone: `node dist/bench/p11-spend.js` after `npm run build`, or through `npm run bench p11`.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FACTORY_BIN } from './cli.js';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../src/demo.js';
import type { RunEvent } from '../src/events.js';
import { DEFAULT_SCRIPTED_MODELS, makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel, type RecordedRequest } from '../src/scripted/server.js';
import { call, type Step, type Tapes } from '../src/scripted/tape.js';
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

const events = (stdout: string): RunEvent[] => stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as RunEvent);

async function bench<T>(tapes: Tapes, files: Record<string, string>, flags: string[], read: (events: RunEvent[], requests: RecordedRequest[]) => T): Promise<T> {
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
    const out = await run(['bon', SPEC, '--models', DEMO_MODELS.join(','), '--json', ...flags], repo, env);
    return read(events(out.stdout), model.requests);
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

interface ForecastSample {
  name: string;
  predicted: number;
  spent: number;
  error: number;
}

function forecastOf(name: string) {
  return (evs: RunEvent[]): ForecastSample => {
    const forecast = evs.find((e): e is Extract<RunEvent, { type: 'forecast' }> => e.type === 'forecast');
    const harvest = evs.find((e): e is Extract<RunEvent, { type: 'harvest' }> => e.type === 'harvest');
    if (!forecast || !harvest) throw new Error(`${name}: the run printed no forecast or no harvest`);
    const predicted = forecast.forecast.total.mid - forecast.forecast.primer;
    const spent = harvest.ranking.reduce((sum, r) => sum + r.cost, 0);
    return { name, predicted, spent, error: Math.abs(predicted - spent) / spent };
  };
}

function notes(): string {
  const rows = ['# Farewells across locales', ''];
  for (let i = 0; rows.join('\n').length < 16_000; i += 1) rows.push(`| xx-${String(i).padStart(3, '0')} | Goodbye, {name} | formal register; the name is never translated |`);
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
  const forecasts = [await bench(demo, {}, [], forecastOf('demo'))];
  const reads = (tape: Step[]): Step[] => [tape[0]!, call('read', { path: 'docs/farewells.md' }), ...tape.slice(1)];
  const withNotes = { ...demo, 'model:alpha': [...reads(demo['model:alpha']!.slice(0, 2)), ...demo['model:alpha']!.slice(2)] };
  forecasts.push(await bench(withNotes, { 'docs/farewells.md': notes() }, [], forecastOf('demo + 4k-token notes')));
  // The cap: each arm calls a cheap tool 40 times before its own steps; the cap lets about a dozen calls through.
  const CAP = 0.012;
  const busy = (steps: Step[]): Step[] => [...Array.from({ length: 40 }, (_, i) => call('bash', { command: `echo ${i}` })), ...steps];
  const capped: Tapes = { 'model:alpha': [...demo['model:alpha']!.slice(0, 2), ...busy(demo['model:alpha']!.slice(2))], 'model:beta': busy(demo['model:beta']!), 'model:gamma': busy(demo['model:gamma']!) };
  const roster = 'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\nbon:\n  arm_max_cost: 0.012\n';
  const overshoots = await bench(capped, { 'adws/adw_config/factory.config.yaml': roster }, [], (_evs, requests) => {
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
  });
  const ok = forecasts.every((f) => f.error <= FORECAST_GOAL) && overshoots.length === 3 && overshoots.every((n) => n <= 1);
  for (const f of forecasts) {
    console.log(`P11 forecast (${f.name}): arms predicted $${f.predicted.toFixed(4)}, spent $${f.spent.toFixed(4)}: error ${(f.error * 100).toFixed(1)} % (goal ≤ ${FORECAST_GOAL * 100} %)`);
  }
  console.log(`P11 hard cap ($${CAP} per arm): model calls billed after the one that crossed it, per arm: ${overshoots.join(', ')} (goal ≤ 1 each) — ${verdictLine(ok)}`);
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
