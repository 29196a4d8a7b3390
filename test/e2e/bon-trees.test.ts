// Best-of-N in worktrees, through the real pi under test and the scripted model (issue 12): the primer reads in a
// worktree of its own, each arm is a fork of the primer in its own worktree and pi process, and the arms run at
// once. The user edits their tree meanwhile and keeps the edit; nothing of the run is left in `git worktree list`,
// `git branch` or on disk; a run killed with SIGKILL leaves worktrees that the next start sweeps.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyWinner } from '../../src/commands/bon.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { bonTapes } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { readLedger } from '../../src/trace/ledger.js';
import { call, fail, report } from '../../src/scripted/tape.js';
import { bonBench, killedMidArms, runBon, SPEC, treeStatus, treesUnder, until, type BonBench } from '../helpers/bon.js';
import { ofType } from '../helpers/factory.js';
import { runCli } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';

let bench: BonBench | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
  for (const c of cleanups.splice(0).reverse()) c();
});

/** A bench whose worktrees go to a folder of the test's own (so a leftover is seen, and nothing outlives the test). */
async function treesBench(thinkMs: number) {
  const b = await bonBench(bonTapes(thinkMs));
  const base = tempDir('factory-trees-', cleanups);
  b.env = { ...b.env, FACTORY_WORKTREES: base };
  return { b, base };
}

/** When each arm started and ended, from the events. */
function spans(events: RunEvent[]): Map<string, { start: number; end: number }> {
  const out = new Map<string, { start: number; end: number }>();
  for (const e of events) {
    if (!('phase' in e) || typeof e.phase !== 'string' || !e.phase.startsWith('arm_')) continue;
    if (e.type === 'phase_started') out.set(e.phase, { start: e.ts, end: Infinity });
    if (e.type === 'phase_ok' || e.type === 'phase_failed') out.get(e.phase)!.end = e.ts;
  }
  return out;
}

function filesUnder(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String) : [];
}

describe('factory bon in worktrees, arms at once', () => {
  it('arms overlap in time, each in its own worktree; the user edits meanwhile and keeps the edit; nothing is left', async () => {
    const { b, base } = await treesBench(400);
    bench = b;
    const branches = git(b.dir, 'branch', '--list', '--all');
    let edited = false;
    const { exit, events, prepared } = await runBon(b, {
      onEvent: (e) => {
        // While the arms work, the user changes a tracked file of their own.
        if (!edited && e.type === 'phase_started' && e.phase === 'arm_2') {
          edited = true;
          fs.appendFileSync(path.join(b.dir, 'README.md'), 'my edit, made while the arms ran\n');
        }
      },
    });
    expect(exit).toBe(0);
    const adwId = prepared.run.adwId;
    // At once: every arm started before the first one ended.
    const s = spans(events);
    expect([...s.keys()].sort()).toEqual(['arm_1', 'arm_2', 'arm_3']);
    const firstEnd = Math.min(...[...s.values()].map((x) => x.end));
    for (const [arm, span] of s)
      expect({ arm, startedBeforeFirstEnd: span.start < firstEnd }).toEqual({ arm, startedBeforeFirstEnd: true });
    // Each arm's session is a fork declared in the ledger with its own worktree as cwd, never the user's tree.
    const forks = readLedger(b.paths.ledgerFile).filter((l) => l.adw_id === adwId && l.reason === 'fork');
    expect(forks.map((l) => l.phase).sort()).toEqual(['arm_1', 'arm_2', 'arm_3']);
    for (const line of forks) expect(line.cwd.startsWith(fs.realpathSync(base))).toBe(true);
    const prime = readLedger(b.paths.ledgerFile).find((l) => l.adw_id === adwId && l.phase === 'prime');
    expect(prime?.cwd.startsWith(fs.realpathSync(base))).toBe(true);
    // Ranked as in place: arm 1 (Bye) is red on its test, arm 2 the cheapest green.
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.winner).toBe(2);
    expect(harvest.ranking.find((r) => r.arm === 1)).toMatchObject({ green: false });
    // The user's tree: their edit is there, nothing of any arm is.
    expect(treeStatus(b.dir)).toBe(' M README.md\n');
    expect(fs.readFileSync(path.join(b.dir, 'README.md'), 'utf8')).toContain('my edit, made while the arms ran');
    expect(fs.existsSync(path.join(b.dir, 'src/farewell.js'))).toBe(false);
    // Nothing left: no worktree in git's list or on disk, the branches as they were.
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(filesUnder(base)).toEqual([]);
    expect(git(b.dir, 'branch', '--list', '--all')).toBe(branches);
    // The winner's patch applies on the user's HEAD (the user's edit stashed away first, as apply needs a clean file).
    git(b.dir, 'stash', '-q');
    const ws = await openWorkspace({ retries: 2, ui: false, json: false }, { env: b.env, cwd: b.dir });
    expect(await applyWinner(prepared.session, ws)).toMatchObject({ applied: true });
    expect(fs.readFileSync(path.join(b.dir, 'src/farewell.js'), 'utf8')).toContain('Goodbye');
  });

  it("an arm that reaches for the user's tree is refused with a motif it reads, and goes on in its own", async () => {
    const tapes = bonTapes(0);
    const reach = { read: call('read', { path: '(set below)' }), ls: call('bash', { command: '(set below)' }) };
    tapes['model:beta'] = [reach.read, reach.ls, ...tapes['model:beta']!];
    const b = await bonBench(tapes);
    bench = b;
    b.env = { ...b.env, FACTORY_WORKTREES: tempDir('factory-trees-fence-', cleanups) };
    // The scripted server plays these very objects: the user's paths are known only now.
    (reach.read as { calls: { args: Record<string, unknown> }[] }).calls[0]!.args.path = path.join(b.dir, 'README.md');
    (reach.ls as { calls: { args: Record<string, unknown> }[] }).calls[0]!.args.command =
      `ls ${b.dir}/src && echo reached`;
    const { exit, events } = await runBon(b);
    expect(exit).toBe(0);
    // Both reaches were blocked by its fence, and the arm is named for them: it ranks below arm 3, equal on the gates.
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.winner).toBe(3);
    expect(harvest.ranking.find((r) => r.arm === 2)).toMatchObject({
      green: true,
      triedCount: 2,
      tried: [
        expect.stringMatching(/^read .*README\.md — blocked by damage-control$/),
        expect.stringMatching(/^bash ls .*\/src && echo reached — blocked by damage-control$/),
      ],
    });
    // What the model got back for each reach: a refusal naming the fence, not the user's files.
    const results = b.rig.model
      .requestsFor('model:beta')
      .flatMap((r) => (r.body.messages ?? []).filter((m) => m.role === 'tool'))
      .map((m) => JSON.stringify(m.content));
    const fenced = [...new Set(results.filter((t) => t.includes('intent fenced')))];
    expect(fenced).toHaveLength(2);
    expect(fenced.join('\n')).toContain(`${path.join(b.dir, 'README.md')} is in another tree of this run`);
    expect(results.join('\n')).not.toContain('reached');
    expect(treeStatus(b.dir)).toBe('');
  });

  it('--concurrency 1 runs the arms one at a time, still each in its own worktree', async () => {
    const { b } = await treesBench(0);
    bench = b;
    const { exit, events } = await runBon(b, { concurrency: 1 });
    expect(exit).toBe(0);
    const s = [...spans(events).values()].sort((x, y) => x.start - y.start);
    for (let i = 1; i < s.length; i += 1) expect(s[i]!.start).toBeGreaterThanOrEqual(s[i - 1]!.end);
    // The arms that wait for a slot are told as such, and their times are not set against the others'.
    expect(ofType(events, 'phase_waiting').map((e) => [e.phase, e.limit, e.why])).toEqual([
      ['arm_2', 1, '(--concurrency)'],
      ['arm_3', 1, '(--concurrency)'],
    ]);
    const harvest = ofType(events, 'harvest')[0]!;
    expect(
      harvest.ranking
        .filter((r) => r.waited)
        .map((r) => r.arm)
        .sort(),
    ).toEqual([2, 3]);
    expect(treeStatus(b.dir)).toBe('');
  });

  it('a run killed with SIGKILL mid-arms leaves worktrees; the next bon sweeps them before its own', async () => {
    const b = await bonBench({
      ...bonTapes(0),
      // The arms hang at the model: the run is killed while they work.
      'model:beta': [
        call('bash', { command: 'sleep 30' }),
        report({ status: 'success', summary: 'x', changed_files: [] }),
      ],
    });
    bench = b;
    const base = tempDir('factory-trees-kill-', cleanups);
    const env = { ...b.env, FACTORY_WORKTREES: base, CI: 'true' };
    const cli = path.resolve('bin/factory.js');
    const child = spawn(process.execPath, [cli, 'bon', SPEC, '--no-ui', '--models', 'scripted/alpha,scripted/beta'], {
      cwd: b.dir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    // Killed once arm 1 has played its whole tape (the primer's two answers, then its write and report) and arm 2
    // is in its sleep: the tapes' cursors are where the second run expects them, however slow the machine is.
    const model = b.rig.model;
    await until(
      'arm 1 done and arm 2 at work',
      () =>
        model.requestsFor('model:alpha').length >= 4 &&
        model.requestsFor('model:beta').length >= 1 &&
        treesUnder(base).includes('arm_2'),
      60_000,
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(treesUnder(base)).toContain('arm_2');
    // The next start (its check phase) sweeps them; the demo tapes answer this second run.
    const second = spawn(
      process.execPath,
      [cli, 'bon', SPEC, '--no-ui', '--models', 'scripted/alpha,scripted/beta', '--arms', '2'],
      { cwd: b.dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log2 = '';
    second.stderr.on('data', (d: Buffer) => (log2 += d.toString()));
    await new Promise((r) => second.once('exit', r));
    expect(log2).toMatch(/removed \d+ worktree\(s\) a stopped run left behind/);
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(filesUnder(base)).toEqual([]);
    expect(treeStatus(b.dir)).toBe('');
  });

  it('Ctrl-C twice while the arms work: the run stops and leaves no worktree, no branch, nothing on disk', async () => {
    const b = await bonBench({
      ...bonTapes(0),
      'model:beta': [
        call('bash', { command: 'sleep 30' }),
        report({ status: 'success', summary: 'x', changed_files: [] }),
      ],
    });
    bench = b;
    const base = tempDir('factory-trees-int-', cleanups);
    const branches = git(b.dir, 'branch', '--list', '--all');
    const child = spawn(
      process.execPath,
      [path.resolve('bin/factory.js'), 'bon', SPEC, '--no-ui', '--models', 'scripted/alpha,scripted/beta'],
      {
        cwd: b.dir,
        env: { ...b.env, FACTORY_WORKTREES: base, CI: 'true' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let log = '';
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    await until('arm 2 at work', () => treesUnder(base).includes('arm_2') && /arm_2: session/.test(log), 60_000);
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(130);
    expect(log).toMatch(/interrupted/);
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(b.dir, 'branch', '--list', '--all')).toBe(branches);
    expect(filesUnder(base)).toEqual([]);
    expect(treeStatus(b.dir)).toBe('');
  });

  it('a bon killed with SIGKILL resumes: finished arms keep their verdicts, the unfinished one forks again, then the harvest', async () => {
    // Arm 2 is at work (a long command) when the cockpit is killed; in the second life a fresh fork does the work.
    const base = tempDir('factory-trees-resume-', cleanups);
    const { bench: b, adwId, env, asked } = await killedMidArms(base);
    bench = b;
    const resumed = await runCli(['resume', adwId, '--no-ui'], { cwd: b.dir, env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    // The finished arms were not asked again; arm 2 was (a fresh fork of the primer).
    expect(b.rig.model.requestsFor('model:alpha').length).toBe(asked.alpha);
    expect(b.rig.model.requestsFor('model:gamma').length).toBe(asked.gamma);
    expect(b.rig.model.requestsFor('model:beta').length).toBeGreaterThan(asked.beta);
    const harvest = JSON.parse(fs.readFileSync(path.join(b.paths.dataDir, 'bon', adwId, 'harvest.json'), 'utf8')) as {
      winner: number | null;
      arms: { arm: number; green: boolean; fixed: string[] }[];
    };
    expect(harvest.winner).toBe(2);
    // The second life judged arm 2 against the first life's baseline (node --test red on HEAD): the same credit.
    expect(harvest.arms.filter((a) => a.green).map((a) => [a.arm, a.fixed])).toEqual([
      [2, ['node --test']],
      [3, ['node --test']],
    ]);
    expect(harvest.arms.map((a) => [a.arm, a.green]).sort()).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    expect(resumed.stdout.trim()).toBe(`factory apply ${adwId}`);
    // Nothing left of either life.
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(filesUnder(base)).toEqual([]);
    expect(treeStatus(b.dir)).toBe('');
  });

  it("payload.setup runs in each arm's worktree first: its output stays out of the patch, a red setup makes only that arm red", async () => {
    const { b } = await treesBench(0);
    bench = b;
    // The setup writes a file in the tree (as an install would) and fails for arm 2 only.
    const setup = `node -e "require('fs').writeFileSync('setup-output.txt', 'arm ' + process.env.FACTORY_ARM); process.exit(process.env.FACTORY_ARM === '2' ? 3 : 0)"`;
    const roster = path.join(b.dir, 'adws/adw_config/factory.config.yaml');
    fs.writeFileSync(
      roster,
      fs.readFileSync(roster, 'utf8').replace('payload:\n', `payload:\n  setup: ${JSON.stringify(setup)}\n`),
    );
    git(b.dir, 'commit', '-qam', 'setup');
    const { exit, events, prepared } = await runBon(b);
    expect(exit).toBe(0);
    const failed = ofType(events, 'phase_failed').find((e) => e.phase === 'arm_2');
    expect(failed?.motif).toMatch(/^setup `node -e .*` exited 3/);
    expect(failed?.motif).not.toContain('\n');
    const harvest = ofType(events, 'harvest')[0]!;
    expect(harvest.winner).toBe(3); // arm 1 is red on its test, arm 2 on its setup
    // Arm 2 never reached the model: zero tokens.
    expect(harvest.ranking.find((r) => r.arm === 2)).toMatchObject({ green: false, tokens: 0 });
    // Arm 2's red setup left its file too: its patch (if any) does not carry it either.
    for (const arm of [1, 2, 3]) {
      const file = path.join(b.paths.dataDir, 'bon', prepared.run.adwId, `arm-${arm}.patch`);
      const patch = arm === 2 && !fs.existsSync(file) ? '' : fs.readFileSync(file, 'utf8');
      const why = ofType(events, 'phase_failed').find((e) => e.phase === `arm_${arm}`)?.motif;
      expect({ arm, setupInPatch: patch.includes('setup-output.txt'), why }).toMatchObject({
        arm,
        setupInPatch: false,
      });
      if (arm !== 2) expect(patch).toContain('src/farewell.js');
    }
    expect(treeStatus(b.dir)).toBe('');
  });

  it('a 429 on one arm backs that arm off (pi retries it) while the others go on; the run is green', async () => {
    const demo = bonTapes(0);
    const b = await bonBench({
      ...demo,
      'model:beta': [fail(429, { times: 2, body: { error: { message: 'rate limited' } } }), ...demo['model:beta']!],
    });
    bench = b;
    b.env = { ...b.env, FACTORY_WORKTREES: tempDir('factory-trees-429-', cleanups) };
    const { exit, events } = await runBon(b);
    expect(exit).toBe(0);
    const retries = events.filter((e) => e.type === 'activity' && e.activity.kind === 'retry');
    expect(retries.length).toBeGreaterThan(0);
    expect(retries.every((e) => 'phase' in e && e.phase === 'arm_2')).toBe(true);
    expect(ofType(events, 'harvest')[0]!.winner).toBe(2);
    expect(
      ofType(events, 'phase_ok')
        .map((e) => e.phase)
        .sort(),
    ).toEqual(['arm_2', 'arm_3', 'check', 'harvest', 'prime']);
  });

  it('a worktree that cannot be made stops the run before a token, in one line, leaving nothing', async () => {
    const { b } = await treesBench(0);
    bench = b;
    // A .worktreeinclude naming a file that does not exist: every worktree refuses (the primer's first).
    fs.writeFileSync(path.join(b.dir, '.worktreeinclude'), 'config/missing.env\n');
    git(b.dir, 'add', '.worktreeinclude');
    git(b.dir, 'commit', '-qm', 'include');
    const { exit, events } = await runBon(b);
    expect(exit).toBe(2);
    const failed = ofType(events, 'phase_failed').find((e) => e.phase === 'prime');
    expect(failed?.motif).toMatch(
      /^the primer has no worktree: \.worktreeinclude names config\/missing\.env, which does not exist in .* \(--in-place runs the arms in your tree\)$/,
    );
    expect(b.rig.model.requests.length).toBe(0);
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(treeStatus(b.dir)).toBe('');
  });
});
