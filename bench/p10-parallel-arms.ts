// P10 (issue 12's wall-time goal): three arms at once against one arm alone. The demo payload's spec through the
// built CLI, real pi and the scripted model with think time (a model takes time to answer; the arms' waits are what
// running them at once overlaps). The same best-of-3 twice: at once (the default: worktrees, one pi per arm) and
// with --concurrency 1 (one after another, still in worktrees). Figures come from each run's own --json events:
// the arms' wall (first arm start to last arm end) at once, against the mean duration of one arm alone.
// Goal: ≤ 1.3×; the sequential wall is printed beside. Then the same three arms on one model (the default use: no
// --models): the followers must go at the leader's first token (its prompt is cached then), not at its turn's end —
// each arm's first tool call is read from the events, and the followers' lag behind the leader's is set against the
// leader's whole turn (goal: < 1, the followers started while the leader was still at work; waiting for its end is
// ≥ 1). Run alone: `node dist/bench/p10-parallel-arms.js`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FACTORY_BIN } from './cli.js';
import { createDemoRepo, DEMO_MODELS } from '../src/commands/demo.js';
import type { RunEvent } from '../src/contract/events.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { call, report, type Tapes } from '../src/scripted/tape.js';
import { verdictLine } from './timing.js';
import { megabytes, sampleTreeRss } from './treeRss.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const SPEC = 'specs/farewell.md';
const GOAL = 1.3;
/** How long the scripted model "thinks" before each answer of an arm. */
const THINK_MS = 1500;

function tapes(): Tapes {
  const write = call(
    'write',
    { path: 'src/farewell.js', content: 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n' },
    { thinkMs: THINK_MS },
  );
  const built = report(
    {
      status: 'success',
      summary: 'farewell added',
      artifacts: [],
      notes_for_next_agent: '',
      changed_files: ['src/farewell.js'],
    },
    undefined,
    { thinkMs: THINK_MS },
  );
  const [first, ...rest] = DEMO_MODELS.map((route) => `model:${route.split('/')[1]}`);
  const out: Tapes = {
    [first!]: [
      call('read', { path: SPEC }),
      report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
      write,
      built,
    ],
  };
  for (const tape of rest) out[tape] = [write, built];
  return out;
}

interface Memory {
  peakTree?: number;
  peakRoot?: number;
  processes: number;
}

/** Three arms on one model: the tape holds the primer's two answers, then each arm's in turn (a conversation claims its run of steps). */
function oneModelTapes(): Tapes {
  const write = call(
    'write',
    { path: 'src/farewell.js', content: 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n' },
    { thinkMs: THINK_MS },
  );
  const built = report(
    {
      status: 'success',
      summary: 'farewell added',
      artifacts: [],
      notes_for_next_agent: '',
      changed_files: ['src/farewell.js'],
    },
    undefined,
    { thinkMs: THINK_MS },
  );
  const tape = `model:${DEMO_MODELS[0]!.split('/')[1]}`;
  return {
    [tape]: [
      call('read', { path: SPEC }),
      report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
      write,
      built,
      write,
      built,
      write,
      built,
    ],
  };
}

function bonEvents(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  models: string[] = DEMO_MODELS,
): Promise<{ events: RunEvent[]; memory: Memory }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FACTORY_BIN, 'bon', SPEC, '--models', models.join(','), '--json', ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const rss = sampleTreeRss(child.pid!);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const memory = rss.stop();
      if (code !== 0)
        return reject(new Error(`factory bon exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`));
      resolve({
        events: out
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as RunEvent),
        memory,
      });
    });
  });
}

/** Each arm's start and end (ms), from its phase events. */
function armSpans(events: RunEvent[]): { start: number; end: number }[] {
  const spans = new Map<string, { start: number; end: number }>();
  for (const e of events) {
    if (!('phase' in e) || typeof e.phase !== 'string' || !e.phase.startsWith('arm_')) continue;
    if (e.type === 'phase_started') spans.set(e.phase, { start: e.ts, end: e.ts });
    if ((e.type === 'phase_ok' || e.type === 'phase_failed') && spans.has(e.phase)) spans.get(e.phase)!.end = e.ts;
  }
  return [...spans.values()];
}

async function side(args: string[]): Promise<{ wall: number; meanArm: number; memory: Memory }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p10-'));
  const model = await startScriptedModel({ tapes: tapes() });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    const { events, memory } = await bonEvents(args, repo, {
      ...process.env,
      ...agent.env,
      FACTORY_WORKTREES: path.join(scratch, 'trees'),
    });
    const spans = armSpans(events);
    if (spans.length !== 3) throw new Error(`expected 3 arms, saw ${spans.length}`);
    const wall = Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start));
    return { wall, meanArm: spans.reduce((sum, s) => sum + (s.end - s.start), 0) / spans.length, memory };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The followers' lag behind the leader's first tool call, and the leader's whole turn, on one model (ms). */
async function oneModel(): Promise<{ lag: number; leaderTurn: number }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p10-one-'));
  const model = await startScriptedModel({ tapes: oneModelTapes() });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    const route = DEMO_MODELS[0]!;
    const { events } = await bonEvents(
      ['--arms', '3'],
      repo,
      { ...process.env, ...agent.env, FACTORY_WORKTREES: path.join(scratch, 'trees') },
      [route],
    );
    const firstTool = new Map<string, number>();
    for (const e of events)
      if (
        e.type === 'activity' &&
        e.phase.startsWith('arm_') &&
        e.activity.kind === 'tool_start' &&
        !firstTool.has(e.phase)
      )
        firstTool.set(e.phase, e.ts);
    if (firstTool.size !== 3) throw new Error(`one model: expected 3 arms at work, saw ${firstTool.size}`);
    const order = [...firstTool.entries()].sort((a, b) => a[1] - b[1]);
    const leader = order[0]![0];
    const span = armSpans(events.filter((e) => 'phase' in e && e.phase === leader))[0]!;
    return { lag: order[order.length - 1]![1] - order[0]![1], leaderTurn: span.end - span.start };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export interface P10Result {
  parallelWallMs: number;
  sequentialWallMs: number;
  oneArmMs: number;
  ratio: number;
  /** Peak resident memory of the cockpit and its pi processes with the arms at once (bytes; undefined off Linux). */
  peakRssBytes?: number;
  /** One model: the followers' lag behind the leader's first tool call, and the leader's turn (ms). */
  oneModelLagMs: number;
  oneModelLeaderTurnMs: number;
  ok: boolean;
}

export async function benchP10(): Promise<P10Result> {
  const sequential = await side(['--concurrency', '1']);
  const parallel = await side([]);
  const one = await oneModel();
  const ratio = parallel.wall / sequential.meanArm;
  const fanOut = one.lag / one.leaderTurn;
  const result = {
    parallelWallMs: parallel.wall,
    sequentialWallMs: sequential.wall,
    oneArmMs: sequential.meanArm,
    ratio,
    peakRssBytes: parallel.memory.peakTree,
    oneModelLagMs: one.lag,
    oneModelLeaderTurnMs: one.leaderTurn,
    ok: ratio <= GOAL && fanOut < 1,
  };
  console.log(
    `P10 three arms at once: ${(parallel.wall / 1000).toFixed(1)} s of arms against ${(sequential.meanArm / 1000).toFixed(1)} s for one arm alone = ${ratio.toFixed(2)}× ` +
      `(goal ≤ ${GOAL.toFixed(1)}×; one after another: ${(sequential.wall / 1000).toFixed(1)} s = ${(sequential.wall / sequential.meanArm).toFixed(2)}×) — ${verdictLine(result.ok)}`,
  );
  console.log(
    `P10 one model: the followers' first tool call ${(one.lag / 1000).toFixed(1)} s after the leader's, whose turn took ${(one.leaderTurn / 1000).toFixed(1)} s = ${fanOut.toFixed(2)}× ` +
      `(goal < 1: they go at its first token, not at its end) — ${verdictLine(fanOut < 1)}`,
  );
  const m = parallel.memory;
  console.log(
    `P10 peak RSS with the arms at once: ${megabytes(m.peakTree)} for the cockpit and its ${Math.max(0, m.processes - 1)} child processes (the cockpit alone ${megabytes(m.peakRoot)}; ` +
      `one after another: ${megabytes(sequential.memory.peakTree)})`,
  );
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === THIS_FILE) {
  benchP10()
    .then((r) => {
      if (!r.ok) process.exitCode = 1;
    })
    .catch((error: unknown) => {
      console.error(`P10: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}
