// P14 (issue 39, point 4): the gates' baseline on HEAD does not hold the arms back. A best-of-3 of the demo payload
// through the built CLI, real pi and the scripted model, whose one gate is slow on HEAD only (the baseline runs with
// FACTORY_ARM=0): it ends well after the primer. The arms must ask their model at the primer's end, not at the
// baseline's: the lag from the primer's end (its phase_ok) to the last arm's first request, set against how much
// longer the baseline ran (goal: the arms ask within 1 s, a ratio under 1 s / the baseline's overrun). Figures come
// from the run's --json events and the scripted model's arrival times, on the same clock. What is left of the lag
// is the arms' own start (a worktree each, then one pi after another, forked from the primer's file): issue 38's
// point 11 starts them while the primer works.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FACTORY_BIN } from './cli.js';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../src/commands/demo.js';
import type { RunEvent } from '../src/contract/events.js';
import { makeAgentDir } from '../src/scripted/agentDir.js';
import { startScriptedModel } from '../src/scripted/server.js';
import { verdictLine } from './timing.js';

/** How long the suite takes on HEAD beyond its own run: far longer than the scripted primer's turn. */
const SLOW_S = 8;
const GOAL_MS = 1000;
const ROSTER = `gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: ${JSON.stringify(`bash -c 'if [ "$FACTORY_ARM" = 0 ]; then sleep ${SLOW_S}; fi; node --test'`)}\n      timeout: 60\n`;

function bonJson(cwd: string, env: NodeJS.ProcessEnv): Promise<RunEvent[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [FACTORY_BIN, 'bon', 'specs/farewell.md', '--models', DEMO_MODELS.join(','), '--json'],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        return reject(new Error(`factory bon exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`));
      resolve(
        out
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as RunEvent),
      );
    });
  });
}

export async function benchP14(): Promise<{ lagMs: number; overrunMs: number }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-p14-'));
  const model = await startScriptedModel({ tapes: bonTapes(300) });
  try {
    const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'pi-agent') });
    const repo = createDemoRepo(path.join(scratch, 'greet'));
    fs.writeFileSync(path.join(repo, 'adws/adw_config/factory.config.yaml'), ROSTER);
    const git = (...args: string[]) => spawn('git', args, { cwd: repo, stdio: 'ignore' });
    await new Promise((r) => git('commit', '-qam', 'a suite slow on HEAD').on('close', r));
    const events = await bonJson(repo, {
      ...process.env,
      ...agent.env,
      FACTORY_WORKTREES: path.join(scratch, 'trees'),
    });
    const primed = events.find((e) => e.type === 'phase_ok' && e.phase === 'prime')?.ts;
    const baseline = events.find((e) => e.type === 'baseline')?.ts;
    if (primed === undefined || baseline === undefined)
      throw new Error('P14: the run has no primer end or no baseline');
    // Each arm's first request: alpha's after the primer's two, beta's and gamma's first.
    const firsts = [
      model.requestsFor('model:alpha')[2],
      model.requestsFor('model:beta')[0],
      model.requestsFor('model:gamma')[0],
    ];
    if (firsts.some((r) => r === undefined)) throw new Error('P14: an arm never asked its model');
    const lagMs = Math.max(...firsts.map((r) => r!.at)) - primed;
    return { lagMs, overrunMs: baseline - primed };
  } finally {
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export async function reportP14(): Promise<void> {
  const { lagMs, overrunMs } = await benchP14();
  console.log(
    `P14 baseline beside the arms: the last arm asked ${lagMs.toFixed(0)} ms after the primer's end; the baseline on HEAD ended ${(overrunMs / 1000).toFixed(1)} s after it: lag/overrun ${(lagMs / overrunMs).toFixed(2)} (goal: lag ≤ ${GOAL_MS} ms, ratio ≤ ${(GOAL_MS / overrunMs).toFixed(2)}) — ${verdictLine(lagMs <= GOAL_MS)}`,
  );
}
