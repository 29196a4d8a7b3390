// `factory clean` on real git, after real best-of-3 runs (the real pi under test, the scripted model): two finished
// runs (each leaving its losers' refs, patches, harvest, run log, pi sessions and traces) and a third one running —
// then killed, leaving its worktrees. Dry runs remove nothing; a clean removes the old finished run, never the
// running one nor the last harvest not applied, and a killed run's worktrees go with it.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes } from '../../src/commands/demo.js';
import { call } from '../../src/scripted/tape.js';
import { runLogPath } from '../../src/trace/runLog.js';
import { armRefs, bonBench, requestsLog, SPEC, until, type BonBench } from '../helpers/bon.js';
import { FACTORY_BIN, runCli } from '../helpers/cli.js';
import { git } from '../helpers/repo.js';

let bench: BonBench | undefined;
let child: ChildProcess | undefined;
let worktrees: string | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
  }
  child = undefined;
  await bench?.cleanup();
  bench = undefined;
  if (worktrees) fs.rmSync(worktrees, { recursive: true, force: true });
  worktrees = undefined;
});

interface Report {
  dryRun: boolean;
  removed: Array<{ adwId: string; refs: string[]; files: string[]; worktrees?: string }>;
  kept: Array<{ adwId: string; why: string; pid?: number }>;
  worktrees: string[];
}

describe('factory clean', () => {
  it('removes an old run’s refs, patches and traces; keeps a running run and the last harvest not applied; a killed run’s worktrees go', async () => {
    const demo = bonTapes(0);
    const thrice = (tape: string) => [...demo[tape]!, ...demo[tape]!, ...demo[tape]!];
    // Run C's arm 2 (beta) sleeps in its first call: the run is live while clean runs.
    const beta = demo['model:beta']!;
    bench = await bonBench({
      'model:alpha': thrice('model:alpha'),
      'model:beta': [...beta, ...beta, call('bash', { command: 'sleep 60' }), ...beta],
      'model:gamma': thrice('model:gamma'),
    });
    worktrees = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-clean-trees-'));
    bench.env.FACTORY_WORKTREES = worktrees;
    const env = { ...bench.env, CI: 'true' };
    const dir = bench.dir;

    // Runs A and B through the built CLI, as a user runs them (its run log, its trace index).
    const bon = ['bon', SPEC, '--no-ui', '--models', 'scripted/alpha,scripted/beta,scripted/gamma'];
    const a = await runCli(bon, { cwd: dir, env, timeoutMs: 120_000 });
    expect(a.code, a.stderr).toBe(0);
    const b = await runCli(bon, { cwd: dir, env, timeoutMs: 120_000 });
    expect(b.code, `${a.stderr}\n${b.stderr}\n${requestsLog(bench.rig.model)}`).toBe(0);
    const idOf = (stderr: string) => /\[([0-9a-f]{8})\]/.exec(stderr)![1]!;
    const [runA, runB] = [idOf(a.stderr), idOf(b.stderr)];
    expect(armRefs(dir, runA)).toEqual([`refs/factory/${runA}/arm-1`, `refs/factory/${runA}/arm-3`]);
    expect(armRefs(dir, runB)).toHaveLength(2);
    const bonA = path.join(bench.paths.dataDir, 'bon', runA);
    expect(fs.readdirSync(bonA).sort()).toEqual(['arm-1.patch', 'arm-2.patch', 'arm-3.patch', 'harvest.json']);
    const ledger = fs.readFileSync(bench.paths.ledgerFile, 'utf8');
    const sessionsOfA = ledger
      .split('\n')
      .filter((l) => l.includes(`"adw_id":"${runA}"`))
      .map((l) => (JSON.parse(l) as { session_id: string }).session_id);
    expect(sessionsOfA.length).toBeGreaterThanOrEqual(4); // the primer and three arms
    const harnessOf = (id: string) => path.join(bench!.paths.harnessTracesDir, `${id}.jsonl`);
    expect(sessionsOfA.every((id) => fs.existsSync(harnessOf(id)))).toBe(true);

    // Run C, live: arms 1 and 3 done, arm 2 in its sleep.
    child = spawn(process.execPath, [FACTORY_BIN, ...bon], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    await until(
      'run C at work in arm 2',
      () => /arm_1 \(agent, attempt 1\/1\): failed/.test(log) && /arm_3 \(agent, attempt 1\/1\): OK/.test(log),
      90_000,
    );
    const runC = /\[([0-9a-f]{8})\]/.exec(log)![1]!;
    const treesOfC = fs
      .readdirSync(worktrees)
      .map((repo) => path.join(worktrees!, repo, runC))
      .find((p) => fs.existsSync(p));
    expect(treesOfC, `worktrees of ${runC} under ${worktrees}`).toBeDefined();

    // Dry run: says what would go, removes nothing.
    const dry = await runCli(['clean', '--older-than', '0', '--keep', '0', '--dry-run', '--json'], { cwd: dir, env });
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as Report;
    expect(plan.dryRun).toBe(true);
    expect(plan.removed.map((r) => r.adwId)).toEqual([runA]);
    expect(plan.removed[0]!.refs).toEqual(armRefs(dir, runA));
    expect(plan.removed[0]!.files).toEqual(
      expect.arrayContaining([bonA, runLogPath(bench.paths, runA), ...sessionsOfA.map(harnessOf)]),
    );
    expect(plan.kept).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ adwId: runC, why: 'running', pid: child.pid }),
        { adwId: runB, why: 'unapplied-harvest' },
      ]),
    );
    expect(armRefs(dir, runA)).toHaveLength(2);
    expect(fs.existsSync(bonA)).toBe(true);
    // The default (14 days, the newest 20): nothing is that old.
    const young = await runCli(['clean'], { cwd: dir, env });
    expect(young.stdout).toMatch(/^nothing to clean/m);
    expect(armRefs(dir, runA)).toHaveLength(2);

    // The clean: run A goes (refs, patches, harvest, run log, its pi sessions and traces, its rows), B and C stay.
    const done = await runCli(['clean', '--older-than', '0', '--keep', '0'], { cwd: dir, env });
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`removed run ${runA}`);
    expect(done.stdout).toContain(`kept run ${runC}: it is running (pid ${child.pid})`);
    expect(done.stdout).toContain(`kept run ${runB}: the last harvest, not applied yet (factory apply ${runB})`);
    expect(git(dir, 'for-each-ref', '--format=%(refname)', `refs/factory/${runA}/`)).toBe('');
    expect(fs.existsSync(bonA)).toBe(false);
    expect(fs.existsSync(runLogPath(bench.paths, runA))).toBe(false);
    expect(sessionsOfA.some((id) => fs.existsSync(harnessOf(id)))).toBe(false);
    expect(fs.readdirSync(bench.paths.sessionsDir).some((name) => sessionsOfA.some((id) => name.includes(id)))).toBe(
      false,
    );
    expect(armRefs(dir, runB)).toHaveLength(2);
    expect(fs.existsSync(path.join(bench.paths.dataDir, 'bon', runB, 'harvest.json'))).toBe(true);
    expect(fs.existsSync(treesOfC!)).toBe(true);
    const listed = (
      JSON.parse((await runCli(['runs', '--json'], { cwd: dir, env })).stdout) as Array<{ adwId: string }>
    ).map((r) => r.adwId);
    expect(listed).not.toContain(runA);
    expect(listed).toEqual(expect.arrayContaining([runB, runC]));

    // Killed: run C is no longer running; its worktrees are a dead run's leftovers and go with it.
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    const after = await runCli(['clean', '--older-than', '0', '--keep', '0', '--json'], { cwd: dir, env });
    const report = JSON.parse(after.stdout) as Report;
    expect(report.removed.map((r) => r.adwId)).toEqual([runC]);
    expect(report.worktrees).toEqual([treesOfC]);
    expect(report.kept).toEqual([{ adwId: runB, why: 'unapplied-harvest' }]);
    expect(fs.existsSync(treesOfC!)).toBe(false);
    expect(git(dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(armRefs(dir, runB)).toHaveLength(2);
    // The user's branch and tree are as they were.
    expect(git(dir, 'status', '--porcelain')).toBe('');
  }, 240_000); // three best-of-3 runs through the CLI, a live one among them: well past the 60 s default on a busy machine

  it('refuses bad input in one line (exit 2) before touching anything; a folder with no runs has nothing to clean', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-clean-empty-'));
    try {
      for (const args of [['--older-than', 'soon'], ['--keep', '-2'], ['everything']]) {
        const bad = await runCli(['clean', ...args, '--cwd', folder]);
        expect(bad.code, args.join(' ')).toBe(2);
        expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      }
      const empty = await runCli(['clean', '--cwd', folder, '--older-than', '0', '--keep', '0']);
      expect(empty.code, empty.stderr).toBe(0);
      expect(empty.stdout).toBe('nothing to clean (runs of any age, beyond the newest 0)\n');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
