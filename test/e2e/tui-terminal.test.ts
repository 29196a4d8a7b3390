// The built CLI in a real terminal (tmux): the live phase graph of a real pi run, and Ctrl-C ending the turn
// with pi's whole process tree gone.
import { afterEach, describe, expect, it } from 'vitest';
import { call, report } from '../../src/scripted/tape.js';
import { FACTORY_BIN } from '../helpers/cli.js';
import { processesWhere, promptBench, type PromptBench } from '../helpers/factory.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: [], notes_for_next_agent: '' };

/** pids started by the factory (they carry a run tag) for this rig: pi and everything its tools started. */
function processesUsing(agentDir: string): number[] {
  return processesWhere(
    (env) => env.includes(`PI_CODING_AGENT_DIR=${agentDir}`) && env.some((v) => v.startsWith('FACTORY_RUN_TAG=')),
  );
}

let bench: PromptBench | undefined;
let term: TmuxSession | undefined;
afterEach(async () => {
  term?.close();
  term = undefined;
  await bench?.cleanup();
  bench = undefined;
});

// tmux is part of this project's test machine; without it there is no real terminal to drive.
describe.skipIf(!hasTmux())('factory prompt in a real terminal', () => {
  it('draws the live phase graph and ends green', async () => {
    bench = await promptBench({ default: [call('bash', { command: 'sleep 1; git ls-files' }), report(GOOD)] });
    term = startTmux(
      [process.execPath, FACTORY_BIN, 'prompt', 'Which files make up this repo?', '--model', 'scripted/alpha'],
      { cwd: bench.repo.dir, env: bench.rig.env },
    );
    const live = await term.waitForScreen((s) => s.includes('sleep 1; git ls-files'));
    expect(live).toMatch(/agent\s+prompt\s+attempt 1\/3/);
    expect(live).toMatch(/○ code\s+dispose/);
    expect(live).toMatch(/ctrl-c/i);
    const done = await term.waitForScreen((s) => s.includes('run green'));
    expect(done).toMatch(/✓ agent\s+prompt/);
    expect(done).toMatch(/✓ code\s+dispose/);
    expect(await term.waitForExit()).toBe(0);
    expect(term.capture()).toContain('"summary": "Three files."');
  });

  it('Ctrl-C aborts the running turn, exits 130 and leaves no process behind', async () => {
    bench = await promptBench({ default: [call('bash', { command: 'sleep 600' })] });
    term = startTmux([process.execPath, FACTORY_BIN, 'prompt', 'Which files?', '--model', 'scripted/alpha'], {
      cwd: bench.repo.dir,
      env: bench.rig.env,
    });
    await term.waitForScreen((s) => s.includes('sleep 600'));
    expect(processesUsing(bench.rig.agentDir.dir).length).toBeGreaterThan(1); // pi and the sleep it started
    term.sendKeys('C-c');
    expect(await term.waitForExit()).toBe(130);
    expect(term.capture()).toMatch(/interrupted/);
    expect(processesUsing(bench.rig.agentDir.dir)).toEqual([]);
  });
});
