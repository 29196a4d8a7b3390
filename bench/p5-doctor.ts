// P5: the full doctor's wall time against its slowest probe run alone (goal ≤ 1.2×). The checks run
// concurrently, so the wall should be the slowest probe plus a little contention — never the sum. The
// workspace is a temp git repo with the node installed and a roster whose routes pi lists (scripted agent dir).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDoctorContext } from '../src/doctor/context.js';
import { doctorChecks } from '../src/doctor/checks.js';
import { doctorSummary } from '../src/doctor/report.js';
import { runDoctor } from '../src/doctor/run.js';
import type { DoctorContext } from '../src/doctor/types.js';
import { installNode } from '../src/pi/node.js';
import { factoryRoot } from '../src/pi/resolve.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { median, verdictLine } from './timing.js';

const ROSTER = `gateway: ""
fallback_model: scripted/beta
agents:
  builder: { model: scripted/alpha }
  prompter: { model: scripted/gamma }
`;

export interface P5Result {
  wallMs: number;
  slowestId: string;
  slowestMs: number;
  ratio: number;
  summary: string;
}

/** A throwaway git repo holding the roster (bench code ships in dist/, so no test helper here). */
function benchRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-p5-')));
  mkdirSync(path.join(dir, 'adws', 'adw_config'), { recursive: true });
  writeFileSync(path.join(dir, 'adws', 'adw_config', 'factory.config.yaml'), ROSTER);
  execFileSync('git', ['init', '-q', dir]);
  return dir;
}

async function measure(ctx: DoctorContext, quick: boolean): Promise<P5Result> {
  // Medians over a few rounds when quick (sub-second, noisy); the full doctor (minutes of battery) runs once.
  const rounds = quick ? 5 : 1;
  const walls: number[] = [];
  let results = await runDoctor(ctx, { quick: true }); // warm-up (disk caches), not measured
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    results = await runDoctor(ctx, { quick });
    walls.push(performance.now() - started);
  }
  const wallMs = median(walls);
  // Each check alone, one after the other: its own cost without the others competing for the two cores.
  let slowestId = '';
  let slowestMs = 0;
  for (const check of doctorChecks(ctx)) {
    if (quick && check.slow) continue;
    const alone: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      await runDoctor(ctx, { only: [check.id], quick });
      alone.push(performance.now() - t);
    }
    const ms = median(alone);
    if (ms > slowestMs) [slowestId, slowestMs] = [check.id, ms];
  }
  return { wallMs, slowestId, slowestMs, ratio: wallMs / slowestMs, summary: doctorSummary(results) };
}

/** `quick` leaves the battery out (it is minutes of real pi runs and dominates the full ratio). */
export async function benchP5(opts: { quick?: boolean } = {}): Promise<P5Result> {
  const agent = makeAgentDir({ baseUrl: 'http://127.0.0.1:9/v1' });
  const repo = benchRepo();
  try {
    const root = factoryRoot();
    installNode(repo, root);
    const ctx = await createDoctorContext({ cwd: repo, env: { ...process.env, ...agent.env }, factoryRoot: root });
    const label = opts.quick ? 'doctor --quick' : 'full doctor';
    const r = await measure(ctx, opts.quick ?? false);
    console.log(
      `P5 ${label} ${r.wallMs.toFixed(0)} ms vs slowest probe alone (${r.slowestId}) ${r.slowestMs.toFixed(0)} ms: ${r.ratio.toFixed(2)}× (goal ≤ 1.2×) [${r.summary}] — ${verdictLine(r.ratio <= 1.2)}`,
    );
    return r;
  } finally {
    rmSync(repo, { recursive: true, force: true });
    rmSync(agent.dir, { recursive: true, force: true });
  }
}
