// The doctor and the gates' programs: each gate's program resolved the way the gates spawn it (a controlled PATH: a
// temp bin folder with bash, sh, git and python3 only), a missing one failing repo.gates with the fix; `--gates` runs
// the gates once on HEAD, in a worktree of HEAD, and fails a row naming a red gate with its motif.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDoctorContext } from '../../src/doctor/context.js';
import { runDoctor } from '../../src/doctor/run.js';
import { factoryRoot } from '../../src/pi/resolve.js';

let dir: string;
let repo: string;
let env: NodeJS.ProcessEnv;

const which = (name: string) => execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-doctor-gates-')));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  for (const tool of ['bash', 'sh', 'git']) fs.symlinkSync(which(tool), path.join(bin, tool));
  fs.symlinkSync('/usr/bin/python3', path.join(bin, 'python3'));
  // The test run's own worktree root (test/global-setup.ts): the doctor's HEAD tree is made and removed there.
  env = { PATH: bin, HOME: dir, FACTORY_WORKTREES: process.env.FACTORY_WORKTREES! };
  repo = path.join(dir, 'lib');
  fs.mkdirSync(repo);
  git('init', '-q');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function commit(files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), text);
  }
  git('add', '-A');
  git('commit', '-qm', 'files');
}

const roster = (...runs: string[]) =>
  `gateway: ""\npayload:\n  dir: .\n  commands:\n${runs.map((r) => `    - run: ${JSON.stringify(r)}\n`).join('')}`;

async function rows(gates = false) {
  const ctx = await createDoctorContext({ cwd: repo, env, factoryRoot: factoryRoot() });
  return Object.fromEntries(
    (await runDoctor({ ...ctx, runGates: gates }, { only: ['repo.gates'] })).map((r) => [r.id, r]),
  );
}

describe('doctor: can the gates run here', () => {
  it('a gate whose program is not on PATH fails repo.gates, with the command that would run (python → python3)', async () => {
    commit({ 'adws/adw_config/factory.config.yaml': roster('python3 -m compileall -q .', 'python -m pytest') });
    const row = (await rows())['repo.gates'];
    expect(row).toMatchObject({
      status: 'fail',
      detail: '`python -m pytest`: python not found on PATH — the gate cannot run, so it would verify nothing',
      fix: 'python3 is on PATH: use `python3 -m pytest` in payload.commands[1] in adws/adw_config/factory.config.yaml',
    });
  });

  it('python3 -m of a module that interpreter lacks fails repo.gates, with the fix', async () => {
    commit({ 'adws/adw_config/factory.config.yaml': roster('python3 -m no_such_runner_xyz -q') });
    expect((await rows())['repo.gates']).toMatchObject({
      status: 'fail',
      detail:
        '`python3 -m no_such_runner_xyz -q`: python3 has no module no_such_runner_xyz — the gate cannot run, so it would verify nothing',
      fix: expect.stringMatching(
        /^install no_such_runner_xyz for python3 \(python3 -m pip install no_such_runner_xyz\), or run it in the project's environment .* in payload\.commands\[0\] in adws\/adw_config\/factory\.config\.yaml$/,
      ),
    });
    commit({ 'adws/adw_config/factory.config.yaml': roster('python3 -m json.tool --help') });
    expect((await rows())['repo.gates']?.status).toBe('ok');
  });

  it('a typo (pythn) is named too; a gate whose programs are all here is ok', async () => {
    commit({ 'adws/adw_config/factory.config.yaml': roster('pythn -m pytest') });
    expect((await rows())['repo.gates']).toMatchObject({
      status: 'fail',
      fix: 'python3 is on PATH: use `python3 -m pytest` in payload.commands[0] in adws/adw_config/factory.config.yaml',
    });
    commit({ 'adws/adw_config/factory.config.yaml': roster('python3 -m compileall -q .') });
    expect((await rows())['repo.gates']).toMatchObject({ status: 'ok', detail: 'python3 -m compileall -q .' });
    expect((await rows())['repo.gates.head']).toBeUndefined(); // only with --gates
  });

  it("--gates: a gate red on HEAD fails its row with its motif; the user's own uncommitted fix plays no part", async () => {
    commit({
      'adws/adw_config/factory.config.yaml': roster('python3 check.py'),
      'check.py': 'import sys\nprint("FAIL codes: expected colour")\nsys.exit(1)\n',
    });
    fs.writeFileSync(path.join(repo, 'check.py'), 'print("ok")\n'); // green in the tree, not on HEAD
    const row = (await rows(true))['repo.gates.head'];
    expect(row?.status).toBe('fail');
    expect(row?.detail).toMatch(
      /^`python3 check\.py` is red on HEAD [0-9a-f]{8}: `python3 check\.py` exited 1: .*FAIL codes: expected colour.* — best-of-N would verify nothing with it/,
    );
    // Nothing of the worktree is left.
    expect(git('worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it("--gates: green on HEAD is ok, with each gate's time; a gate that cannot run says the fix", async () => {
    commit({ 'adws/adw_config/factory.config.yaml': roster('python3 check.py'), 'check.py': 'print("ok")\n' });
    expect((await rows(true))['repo.gates.head']).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^on HEAD [0-9a-f]{8}: ✓ python3 check\.py \([\d.]+ s\)$/),
    });
    commit({ 'adws/adw_config/factory.config.yaml': roster("bash -c 'pythn check.py'") });
    const row = (await rows(true))['repo.gates.head'];
    expect(row).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/^python3 is on PATH: use `bash -c 'python3 check.py'`/),
    });
    expect(row?.detail).toMatch(/cannot run: pythn: command not found/);
  });
});

describe('factory doctor --gates, headless', () => {
  it('the flag reaches the check: its row is in the output, and the doctor fails on a gate red on HEAD', async () => {
    const { doctorHeadless } = await import('../../src/commands/doctor.js');
    const { parseCli } = await import('../../src/cli/args.js');
    commit({
      'adws/adw_config/factory.config.yaml': roster('python3 check.py'),
      'check.py': 'raise SystemExit("FAIL codes")\n',
    });
    expect(parseCli(['doctor', '--gates']).flags.gates).toBe(true);
    const out = await doctorHeadless(['repo.gates'], { cwd: repo, retries: 2, ui: false, json: false, gates: true });
    expect(out.stdout).toMatch(/✗ repo\.gates\.head\s+`python3 check\.py` is red on HEAD [0-9a-f]{8}: .*FAIL codes/);
    expect(out.exit).toBe(1);
    const without = await doctorHeadless(['repo.gates'], { cwd: repo, retries: 2, ui: false, json: false });
    expect(without.stdout).not.toContain('repo.gates.head');
  });
});
