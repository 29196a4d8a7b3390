// An arm's own git and its OS sandbox, on real git and the real bubblewrap (issue 24, points 1-3): the arm's tree is
// a repository of its own at the base (the user's objects borrowed, nothing of the user's git shared), what the arm
// plants in its git is named, and a program in the sandbox writes its tree and nothing else — not the user's
// repository, not a read-only file inside a writable folder — and a job it detaches dies with it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addArmRepo } from '../../src/bon/tree/repo.js';
import { ownGitActs, readOwnGit } from '../../src/bon/git/own.js';
import { bwrapArgs } from '../../src/sandbox/bwrap.js';
import { detectSandbox } from '../../src/sandbox/detect.js';
import { wrapCommand } from '../../src/sandbox/wrap.js';
import { runToEnd } from '../../src/process/run.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function scratch(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function armOf(files: Record<string, string>) {
  const repo = makeTempRepo({ files });
  cleanups.push(repo.cleanup);
  const base = git(repo.dir, 'rev-parse', 'HEAD').trim();
  const env = { ...process.env, FACTORY_WORKTREES: scratch('factory-armrepo-trees-') };
  const tree = await addArmRepo(repo.dir, { run: 'r1', name: 'arm_1', commit: base, env, git: { env } });
  cleanups.push(() => tree.remove());
  return { repo, base, tree, env };
}

describe("an arm's own git", () => {
  it("is a repository of its own at the base: the user's objects borrowed, its commits, refs and hooks its own", async () => {
    const { repo, base, tree } = await armOf({ 'a.txt': 'a\n' });
    expect(git(tree.dir, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(git(tree.dir, 'status', '--porcelain')).toBe('');
    expect(fs.readFileSync(path.join(tree.dir, 'a.txt'), 'utf8')).toBe('a\n');
    expect(git(tree.dir, 'rev-parse', '--git-common-dir').trim()).toBe('.git');
    const userGit = () => git(repo.dir, 'for-each-ref').trim() + git(repo.dir, 'count-objects');
    const before = userGit();
    fs.writeFileSync(path.join(tree.dir, 'b.txt'), 'b\n');
    git(tree.dir, 'add', 'b.txt');
    git(tree.dir, '-c', 'user.name=a', '-c', 'user.email=a@example.invalid', 'commit', '-qm', 'arm work');
    git(tree.dir, 'branch', 'arm-branch');
    git(tree.dir, 'tag', 'arm-tag');
    expect(userGit()).toBe(before);
    expect(git(repo.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });

  it('names what the arm planted in it (a remote, core.hooksPath, a filter, a hook, attributes), not its commits', async () => {
    const { tree } = await armOf({ 'a.txt': 'a\n' });
    const before = await readOwnGit(tree.dir);
    git(
      tree.dir,
      '-c',
      'user.name=a',
      '-c',
      'user.email=a@example.invalid',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'work',
    );
    expect(await ownGitActs(tree.dir, before)).toEqual([]);
    git(tree.dir, 'remote', 'add', 'evil', 'https://example.invalid/e.git');
    git(tree.dir, 'config', 'core.hooksPath', '/tmp/x');
    git(tree.dir, 'config', 'filter.evil.clean', 'touch /tmp/y');
    fs.mkdirSync(path.join(tree.dir, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(tree.dir, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
    fs.writeFileSync(path.join(tree.dir, '.git', 'info', 'attributes'), '* filter=evil\n');
    const acts = await ownGitActs(tree.dir, before);
    for (const act of [
      'added remote evil',
      'set core.hooksPath',
      'set filter.evil.clean',
      '.git/hooks/pre-commit (added)',
      '.git/info/attributes (added)',
    ])
      expect(acts).toContain(act);
  });
});

describe('the bubblewrap sandbox', () => {
  it('binds the root read-only first, then the writable folders, then the read-only exceptions, then the folder to start in', () => {
    const args = bwrapArgs({ writable: ['/w/tree'], readOnly: ['/w/tree/ledger'], cwd: '/w/tree' });
    expect(args.slice(0, 3)).toEqual(['--ro-bind', '/', '/']);
    expect(args).toContain('--unshare-pid');
    expect(args.indexOf('--bind')).toBeLessThan(args.indexOf('--ro-bind-try'));
    expect(args.slice(-2)).toEqual(['--chdir', '/w/tree']);
  });

  it("lets a program write its tree only: the user's repository and a read-only file in the tree are refused; a detached job dies with it", async () => {
    const probe = await detectSandbox();
    if (!probe.ok) throw new Error(`this test needs the sandbox (CI installs bubblewrap): ${probe.motif}`);
    const user = scratch('factory-sbx-user-');
    const tree = scratch('factory-sbx-tree-');
    fs.writeFileSync(path.join(tree, 'sealed'), 'sealed\n');
    const spec = {
      sandbox: probe.sandbox,
      policy: { writable: [tree], readOnly: [path.join(tree, 'sealed')], cwd: tree },
    };
    const script = [
      'echo mine > own.txt && echo own-ok',
      `echo x > ${user}/intruder.txt 2>/dev/null || echo user-refused`,
      'echo x >> sealed 2>/dev/null || echo sealed-refused',
      `env -i /bin/sh -c "setsid sh -c 'sleep 1; echo late > ${tree}/late.txt' > /dev/null 2>&1 < /dev/null &"`,
    ].join('; ');
    const line = wrapCommand(spec, 'bash', ['-c', script]);
    const out = await runToEnd(line.command, line.args, { cwd: tree });
    expect(out.code).toBe(0);
    expect(out.stdout.toString('utf8').trim().split('\n')).toEqual(['own-ok', 'user-refused', 'sealed-refused']);
    expect(fs.readFileSync(path.join(tree, 'own.txt'), 'utf8')).toBe('mine\n');
    expect(fs.readdirSync(user)).toEqual([]);
    expect(fs.readFileSync(path.join(tree, 'sealed'), 'utf8')).toBe('sealed\n');
    await new Promise((r) => setTimeout(r, 1500)); // past the job's sleep, had it outlived the sandbox
    expect(fs.existsSync(path.join(tree, 'late.txt'))).toBe(false);
  });
});
