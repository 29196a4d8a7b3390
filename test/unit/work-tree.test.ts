// The file-system reading of the work tree's top-level against the real git, layout by layout: where it answers,
// it answers what `git rev-parse --show-toplevel` prints (or "no repository" where git finds none); everywhere git
// could read otherwise, it declines and the workspace root comes from git, as before.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitError, topLevel } from '../../src/process/git.js';
import { resolveWorkspaceRoot } from '../../src/config/paths.js';
import { discoverTopLevel } from '../../src/process/workTree.js';
import { git, makeTempRepo, tempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function repo(): string {
  const r = makeTempRepo({ files: { 'README.md': '# r\n', 'src/deep/a.js': 'a\n' } });
  cleanups.push(r.cleanup);
  return r.dir;
}

/** What the factory took before: git's top-level, or the folder itself when git says no. */
async function byGit(dir: string): Promise<string> {
  try {
    return (await topLevel(dir)) || dir;
  } catch (error) {
    if (error instanceof GitError) return dir;
    throw error;
  }
}

async function expectSameAsGit(dir: string): Promise<void> {
  expect(await resolveWorkspaceRoot(dir)).toBe(await byGit(dir));
}

describe('discoverTopLevel', () => {
  it('answers as git does in a plain repository, from its root and from any subfolder', async () => {
    const dir = repo();
    for (const at of [dir, path.join(dir, 'src'), path.join(dir, 'src', 'deep')]) {
      expect(discoverTopLevel(at)).toBe(dir);
      expect(discoverTopLevel(at)).toBe(await topLevel(at));
    }
  });

  it('answers "no repository" outside any, where git fails and the folder itself is kept', async () => {
    const plain = tempDir('factory-nogit-', cleanups);
    fs.mkdirSync(path.join(plain, 'sub'));
    await expect(topLevel(plain)).rejects.toThrow(GitError);
    expect(discoverTopLevel(path.join(plain, 'sub'))).toBeNull();
    expect(await resolveWorkspaceRoot(path.join(plain, 'sub'))).toBe(path.join(plain, 'sub'));
  });

  it('follows links to the physical folder, as git does', async () => {
    const dir = repo();
    const links = tempDir('factory-links-', cleanups);
    fs.symlinkSync(path.join(dir, 'src'), path.join(links, 'src-link'));
    const at = path.join(links, 'src-link');
    expect(discoverTopLevel(at)).toBe(dir);
    await expectSameAsGit(at);
  });

  it('declines inside .git, in a bare repository, a linked worktree and a folder with a .git file: git answers', async () => {
    const dir = repo();
    const bare = tempDir('factory-bare-', cleanups);
    git(bare, 'init', '-q', '--bare');
    const worktree = path.join(tempDir('factory-wt-', cleanups), 'wt');
    git(dir, 'worktree', 'add', '-q', worktree);
    const gitFile = tempDir('factory-gitfile-', cleanups);
    fs.writeFileSync(path.join(gitFile, '.git'), `gitdir: ${path.join(dir, '.git')}\n`);
    for (const at of [path.join(dir, '.git'), path.join(dir, '.git', 'objects'), bare, worktree, gitFile]) {
      expect(discoverTopLevel(at)).toBeUndefined();
      await expectSameAsGit(at);
    }
  });

  it('declines a .git folder that is not a repository, and a repository config that moves or bares the work tree', async () => {
    const dir = repo();
    fs.mkdirSync(path.join(dir, 'src', '.git')); // git passes over it and finds the repository above
    expect(discoverTopLevel(path.join(dir, 'src'))).toBeUndefined();
    await expectSameAsGit(path.join(dir, 'src'));
    for (const [key, value] of [
      ['core.worktree', path.join(dir, 'src')],
      ['core.bare', 'true'],
      ['extensions.worktreeConfig', 'true'],
    ] as const) {
      const other = repo();
      git(other, 'config', key, value);
      expect(discoverTopLevel(other)).toBeUndefined();
      await expectSameAsGit(other);
    }
  });

  it('declines when the environment steers git or no git can start', () => {
    const dir = repo();
    expect(discoverTopLevel(dir, { ...process.env, GIT_DIR: path.join(dir, '.git') })).toBeUndefined();
    expect(discoverTopLevel(dir, { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(dir) })).toBeUndefined();
    expect(discoverTopLevel(dir, { ...process.env, PATH: tempDir('factory-nopath-', cleanups) })).toBeUndefined();
    // Variables that do not steer discovery (a CA bundle, the pager) leave the answer to the file system.
    expect(discoverTopLevel(dir, { ...process.env, GIT_SSL_CAINFO: '/etc/ssl/certs/ca.pem', GIT_PAGER: 'cat' })).toBe(
      dir,
    );
  });
});
