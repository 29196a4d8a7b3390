// `factory bon --apply` killed with -9 after its harvest and before its apply (issue 38, point 12), through the built
// CLI, the real pi and the scripted model: `factory show` says the apply asked for did not happen, `factory resume`
// does it — exactly once, re-verified on HEAD — and sweeps the scratch folder the killed apply left in the temp folder.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes } from '../../src/commands/demo.js';
import { bonBench, SPEC, treeStatus, until, type BonBench } from '../helpers/bon.js';
import { FACTORY_BIN, runCli } from '../helpers/cli.js';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

/** The demo's gate, slow once green: the apply's run of it on HEAD is still going when the cockpit is killed. */
const ROSTER =
  'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test && sleep 4\n      timeout: 60\n';

const owned = (pid: number) =>
  fs.readdirSync(os.tmpdir()).filter((name) => {
    if (!/^factory-apply-/.test(name)) return false;
    try {
      return fs.readFileSync(path.join(os.tmpdir(), name, '.factory-owner'), 'utf8').trim() === String(pid);
    } catch {
      return false;
    }
  });

describe('factory bon --apply killed between the harvest and the apply', () => {
  it('show says the apply did not happen; resume applies the winner once and sweeps what the kill left', async () => {
    bench = await bonBench(bonTapes(0), { 'adws/adw_config/factory.config.yaml': ROSTER });
    const b = bench;
    const env = { ...b.env, CI: 'true' };
    const child = spawn(
      process.execPath,
      [FACTORY_BIN, 'bon', SPEC, '--no-ui', '--apply', '--models', 'scripted/alpha,scripted/beta,scripted/gamma'],
      { cwd: b.dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    // The apply's scratch folder, seen while the apply runs (another test's bon may sweep it once its owner is dead).
    let left: string[] = [];
    try {
      await until(
        'the run green, its apply under way',
        () => /run green/.test(log) && (left = owned(child.pid!)).length > 0,
        120_000,
      );
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    const adwId = /\[([0-9a-f]{8})\]/.exec(log)![1]!;
    expect(treeStatus(b.dir)).toBe('');
    expect(left).toHaveLength(1);

    const shown = await runCli(['show', adwId], { cwd: b.dir, env });
    expect(shown.stdout).toContain(
      `apply asked (--apply) and not done: the run stopped before it — factory resume ${adwId} applies the winner`,
    );

    const resumed = await runCli(['resume', adwId, '--no-ui'], { cwd: b.dir, env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `run ${adwId} is green, but the apply it asked for (--apply) never happened: applying its winner now`,
    );
    expect(resumed.stdout).toMatch(/^applied arm 2/);
    expect(treeStatus(b.dir)).toBe('A  src/farewell.js\n');
    expect(left.filter((name) => fs.existsSync(path.join(os.tmpdir(), name)))).toEqual([]);

    // Once: a second resume finds the run done, the apply recorded, and changes nothing.
    const again = await runCli(['resume', adwId, '--no-ui'], { cwd: b.dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`run ${adwId} is green: nothing to resume`);
    expect(treeStatus(b.dir)).toBe('A  src/farewell.js\n');
    expect((await runCli(['show', adwId], { cwd: b.dir, env })).stdout).not.toContain(
      'apply asked (--apply) and not done',
    );
  });
});
