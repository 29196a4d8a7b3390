// Git helpers on real temp repositories (the real git, no stand-in).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  changedFiles,
  GitError,
  gitRaw,
  isWorkTree,
  parseStatusV2,
  topLevel,
  treeState,
} from '../../src/process/git.js';
import { prefetchWorkspaceRoot, resolveWorkspaceRoot } from '../../src/config/paths.js';
import { processesTagged } from '../helpers/factory.js';
import { git, makeTempRepo, type TempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function repo(
  files: Record<string, string> = { 'README.md': '# r\n', 'src/a.js': 'a\n', 'src/b.js': 'b\n' },
): TempRepo {
  const r = makeTempRepo({ files });
  cleanups.push(r.cleanup);
  return r;
}

function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-nogit-')));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('isWorkTree', () => {
  it('is true in a repo and in its subfolders, false elsewhere or for a missing folder', async () => {
    const r = repo();
    expect(await isWorkTree(r.dir)).toBe(true);
    expect(await isWorkTree(path.join(r.dir, 'src'))).toBe(true);
    expect(await isWorkTree(tempDir())).toBe(false);
    expect(await isWorkTree(path.join(r.dir, 'missing'))).toBe(false);
    expect(await isWorkTree(path.join(r.dir, '.git'))).toBe(false);
  });

  it('runs git with the environment it is given', async () => {
    const r = repo();
    // GIT_DIR pointing nowhere makes git look outside the repo: proof the given env, not the cockpit's, is used.
    expect(await isWorkTree(r.dir, { env: { PATH: process.env.PATH, GIT_DIR: path.join(r.dir, 'nowhere') } })).toBe(
      false,
    );
    expect(await isWorkTree(r.dir, { env: { PATH: process.env.PATH } })).toBe(true);
  });
});

describe('treeState', () => {
  it('reports a clean tree: HEAD, branch, nothing dirty or untracked', async () => {
    const r = repo();
    const state = await treeState(r.dir);
    expect(state).toEqual({ head: git(r.dir, 'rev-parse', 'HEAD').trim(), branch: 'main', dirty: [], untracked: [] });
  });

  it('lists modified, staged, deleted, renamed and untracked paths, spaces and all, from a subfolder too', async () => {
    const r = repo();
    fs.writeFileSync(path.join(r.dir, 'src/a.js'), 'changed\n');
    fs.rmSync(path.join(r.dir, 'README.md'));
    git(r.dir, 'mv', 'src/b.js', 'src/b renamed.js');
    fs.mkdirSync(path.join(r.dir, 'new dir'));
    fs.writeFileSync(path.join(r.dir, 'new dir/with space.txt'), 'x');
    fs.writeFileSync(path.join(r.dir, 'notes.md'), 'x');
    fs.writeFileSync(path.join(r.dir, 'staged.js'), 'x');
    git(r.dir, 'add', 'staged.js');
    const state = await treeState(path.join(r.dir, 'src'));
    expect([...state.dirty].sort()).toEqual(['README.md', 'src/a.js', 'src/b renamed.js', 'staged.js']);
    expect([...state.untracked].sort()).toEqual(['new dir/with space.txt', 'notes.md']);
    expect(state.branch).toBe('main');
  });

  it('says when HEAD is detached and when there is no commit yet', async () => {
    const r = repo();
    git(r.dir, 'checkout', '-q', '--detach');
    expect((await treeState(r.dir)).branch).toBeNull();
    const empty = tempDir();
    git(empty, 'init', '-q', '-b', 'trunk');
    fs.writeFileSync(path.join(empty, 'first.txt'), 'x');
    expect(await treeState(empty)).toEqual({ head: null, branch: 'trunk', dirty: [], untracked: ['first.txt'] });
  });

  it('throws a GitError with a one-line reason outside a repo, and leaves no git process behind', async () => {
    const tag = `git-unit-${process.pid}`;
    await expect(treeState(tempDir(), { runTag: tag })).rejects.toThrow(GitError);
    await expect(treeState(tempDir())).rejects.toThrow(/git rev-parse failed in .*: fatal: not a git repository/);
    await expect(treeState('/nonexistent/factory')).rejects.toThrow('not a folder: /nonexistent/factory');
    expect(processesTagged(tag)).toEqual([]);
  });
});

describe('changedFiles', () => {
  it('without a base: everything that differs from HEAD, untracked included, repo-relative and sorted', async () => {
    const r = repo();
    expect(await changedFiles(r.dir)).toEqual([]);
    fs.writeFileSync(path.join(r.dir, 'src/a.js'), 'changed\n');
    fs.writeFileSync(path.join(r.dir, 'src/new.js'), 'new\n');
    fs.writeFileSync(path.join(r.dir, '.gitignore'), 'ignored.log\n');
    fs.writeFileSync(path.join(r.dir, 'ignored.log'), 'x');
    git(r.dir, 'mv', 'src/b.js', 'src/c.js');
    expect(await changedFiles(path.join(r.dir, 'src'))).toEqual([
      '.gitignore',
      'src/a.js',
      'src/b.js',
      'src/c.js',
      'src/new.js',
    ]);
  });

  it('since a commit: committed changes since then count as well as the working tree', async () => {
    const r = repo();
    const start = git(r.dir, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(r.dir, 'src/a.js'), 'committed change\n');
    git(r.dir, 'commit', '-q', '-am', 'change a');
    fs.writeFileSync(path.join(r.dir, 'later.txt'), 'x');
    expect(await changedFiles(r.dir, start)).toEqual(['later.txt', 'src/a.js']);
    expect(await changedFiles(r.dir)).toEqual(['later.txt']);
  });

  it('refuses a base that is not a commit, or that reads as an option', async () => {
    const r = repo();
    await expect(changedFiles(r.dir, 'no-such-ref')).rejects.toThrow('git: no-such-ref is not a commit');
    await expect(changedFiles(r.dir, '--output=/tmp/x')).rejects.toThrow(GitError);
  });

  it('in a repo without commits: every staged and untracked file', async () => {
    const empty = tempDir();
    git(empty, 'init', '-q');
    fs.writeFileSync(path.join(empty, 'a.txt'), 'x');
    fs.writeFileSync(path.join(empty, 'b.txt'), 'x');
    git(empty, 'add', 'a.txt');
    expect(await changedFiles(empty)).toEqual(['a.txt', 'b.txt']);
  });
});

describe('topLevel and parseStatusV2', () => {
  it('finds the root from a subfolder', async () => {
    const r = repo();
    expect(await topLevel(path.join(r.dir, 'src'))).toBe(r.dir);
  });

  it('parses unmerged entries and skips the original path of a rename', () => {
    const raw = [
      '# branch.oid 0123456789abcdef0123456789abcdef01234567',
      '# branch.head feature/x',
      '2 R. N... 100644 100644 100644 aaaa bbbb R100 new name.js',
      'old name.js',
      'u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict.js',
      '? new.txt',
      '',
    ].join('\0');
    expect(parseStatusV2(raw)).toEqual({
      head: '0123456789abcdef0123456789abcdef01234567',
      branch: 'feature/x',
      dirty: ['new name.js', 'conflict.js'],
      untracked: ['new.txt'],
    });
  });
});

describe('resolveWorkspaceRoot and its prefetch', () => {
  it('answers the git top-level from a subfolder, the folder itself outside a work tree', async () => {
    const r = repo();
    expect(await resolveWorkspaceRoot(path.join(r.dir, 'src'))).toBe(r.dir);
    const plain = tempDir();
    expect(await resolveWorkspaceRoot(plain)).toBe(plain);
  });

  it("a prefetched answer is the probe's answer, taken once: the next call probes afresh", async () => {
    const dir = tempDir();
    const sub = path.join(dir, 'sub');
    fs.mkdirSync(sub);
    prefetchWorkspaceRoot(sub);
    prefetchWorkspaceRoot(dir); // the latest prefetch wins; a folder it was not made for probes afresh
    expect(await resolveWorkspaceRoot(sub)).toBe(sub);
    expect(await resolveWorkspaceRoot(`${dir}/sub/..`)).toBe(dir); // the same folder spelled otherwise takes it
    git(dir, 'init', '-q');
    // Were either answer kept, these would still say "not a repo".
    expect(await resolveWorkspaceRoot(sub)).toBe(dir);
    expect(await resolveWorkspaceRoot(dir)).toBe(dir);
  });
});

describe("the factory's git runs no program the repository names", () => {
  it("hooks and the fsmonitor an agent could plant in .git never run under the factory's git; plain git does run them", async () => {
    const r = repo();
    const marks = tempDir();
    // What a hostile arm could write with bash: a post-checkout hook and an fsmonitor hook, each leaving a mark.
    const hook = (name: string) => {
      const file = path.join(r.dir, '.git', 'hooks', name);
      fs.writeFileSync(file, `#!/bin/sh\necho ran >> ${JSON.stringify(path.join(marks, name))}\n`, { mode: 0o755 });
      return file;
    };
    hook('post-checkout');
    hook('pre-commit');
    const monitor = hook('fsmonitor-watchman');
    git(r.dir, 'config', 'core.fsmonitor', monitor);
    git(r.dir, 'config', 'core.pager', `sh -c 'echo ran >> ${path.join(marks, 'pager')}; cat'`);
    fs.writeFileSync(path.join(r.dir, 'src/a.js'), 'changed\n');

    await treeState(r.dir);
    expect((await gitRaw(r.dir, ['checkout', '--', '.'])).code).toBe(0);
    expect((await gitRaw(r.dir, ['log', '-1', '--oneline'])).code).toBe(0);
    expect((await gitRaw(r.dir, ['commit', '-q', '--allow-empty', '-m', 'factory'])).code).toBe(0);
    expect(fs.readdirSync(marks)).toEqual([]);

    // The control: the same repository under plain git runs them (so the test above can fail).
    spawnSync('git', ['checkout', '--', '.'], { cwd: r.dir });
    spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'user'], {
      cwd: r.dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'u',
        GIT_AUTHOR_EMAIL: 'u@x',
        GIT_COMMITTER_NAME: 'u',
        GIT_COMMITTER_EMAIL: 'u@x',
      },
    });
    expect(fs.readdirSync(marks).sort()).toEqual(expect.arrayContaining(['post-checkout', 'pre-commit']));
  });
});
