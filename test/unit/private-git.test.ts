// The factory's own git on an arm's tree reads nothing an arm can write (issue 24, point 1), on real git: a clean
// filter, a textconv and an fsmonitor planted in the shared config, `* filter=evil` in info/attributes and in the
// tree's .gitattributes, a filter in ~/.gitconfig — none of them runs when the factory harvests the arm's patch or
// reads its tree's status through the private git dir, while the same harvest through the repository's own git does
// run the planted filter (the hazard is real). The harvest is the arm's work, and the user's object store gains
// nothing from it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { treeState } from '../../src/process/git.js';
import { harvestPatch } from '../../src/bon/patch/patch.js';
import { privateGit, withPrivateGit } from '../../src/bon/git/private.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function scratch(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function looseObjects(dir: string): string[] {
  const objects = path.join(dir, '.git', 'objects');
  return fs
    .readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => fs.readdirSync(path.join(objects, d)).map((f) => d + f))
    .sort();
}

/** A repository, an arm's detached worktree of it, and an arm that planted every driver it could reach. */
function hostileArm() {
  const repo = makeTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'keep.txt': 'kept\n' } });
  cleanups.push(repo.cleanup);
  const base = git(repo.dir, 'rev-parse', 'HEAD').trim();
  const tree = path.join(scratch('factory-privgit-arm-'), 'arm_1');
  git(repo.dir, 'worktree', 'add', '--detach', '--quiet', tree, 'HEAD');
  cleanups.push(() => git(repo.dir, 'worktree', 'remove', '--force', '--force', tree));
  const marks = scratch('factory-privgit-marks-');
  const mark = (name: string) => path.join(marks, name);
  const home = scratch('factory-privgit-home-');
  // The shared config, from the arm's own tree (`git config` in a worktree writes it).
  git(tree, 'config', 'filter.evil.clean', `sh -c 'touch ${mark('clean')}; cat'`);
  git(tree, 'config', 'filter.evil.smudge', `sh -c 'touch ${mark('smudge')}; cat'`);
  git(tree, 'config', 'diff.evil.textconv', `sh -c 'touch ${mark('textconv')}; cat'`);
  const monitor = path.join(marks, 'monitor.sh');
  fs.writeFileSync(monitor, `#!/bin/sh\ntouch ${mark('fsmonitor')}\n`, { mode: 0o755 });
  git(tree, 'config', 'core.fsmonitor', monitor);
  fs.mkdirSync(path.join(repo.dir, '.git', 'info'), { recursive: true });
  fs.writeFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), '* filter=evil diff=evil\n');
  fs.writeFileSync(path.join(tree, '.gitattributes'), '* filter=evil diff=evil\n*.txt filter=home\n');
  fs.writeFileSync(path.join(home, '.gitconfig'), `[filter "home"]\n\tclean = sh -c 'touch ${mark('home')}; cat'\n`);
  // The arm's work.
  fs.writeFileSync(path.join(tree, 'a.txt'), 'a, changed\n');
  fs.rmSync(path.join(tree, 'b.txt'));
  fs.writeFileSync(path.join(tree, 'c.txt'), 'c\n');
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
  delete env.GIT_CONFIG_GLOBAL;
  return { repo: repo.dir, tree, base, marks, env, patchDir: scratch('factory-privgit-patch-') };
}

describe("the factory's private git on an arm's tree", () => {
  it("harvests the arm's work and runs no filter, textconv, fsmonitor or home-config driver the arm planted", async () => {
    const arm = hostileArm();
    const before = looseObjects(arm.repo);
    const harvest = await harvestPatch(arm.tree, path.join(arm.patchDir, 'arm-1.patch'), {
      base: arm.base,
      git: { env: arm.env },
      privateFrom: arm.repo,
    });
    expect(fs.readdirSync(arm.marks)).toEqual(['monitor.sh']);
    expect(harvest.files.sort()).toEqual(['.gitattributes', 'a.txt', 'b.txt', 'c.txt']);
    const patch = fs.readFileSync(harvest.patchFile, 'utf8');
    expect(patch).toContain('+a, changed');
    expect(patch).toContain('deleted file mode');
    expect(patch).toContain('+c');
    // The harvest's blobs live in the private git dir, removed with it: the user's object store is as it was.
    expect(looseObjects(arm.repo)).toEqual(before);
    // The arm's own index was not touched by the harvest either.
    expect(
      git(arm.tree, '-c', 'core.fsmonitor=false', '-c', 'filter.evil.clean=cat', 'diff', '--cached', '--name-only'),
    ).toBe('');
  });

  it("reads the tree's status against the base through the same private git, running nothing", async () => {
    const arm = hostileArm();
    const state = await withPrivateGit(arm.repo, arm.tree, arm.base, { env: arm.env }, (own) =>
      treeState(arm.tree, own),
    );
    expect([...state.dirty].sort()).toEqual(['a.txt', 'b.txt']);
    expect([...state.untracked].sort()).toEqual(['.gitattributes', 'c.txt']);
    expect(fs.readdirSync(arm.marks)).toEqual(['monitor.sh']);
    // The private git dir is gone once the work is done.
    const own = await privateGit(arm.repo, arm.tree, arm.base, { env: arm.env });
    const gitDir = own.git.env!.GIT_DIR!;
    expect(fs.existsSync(path.join(gitDir, 'index'))).toBe(true);
    own.release();
    expect(fs.existsSync(gitDir)).toBe(false);
  });

  it("the same harvest through the repository's own git runs the planted filter: the hazard the private git removes", async () => {
    const arm = hostileArm();
    await harvestPatch(arm.tree, path.join(arm.patchDir, 'arm-1.patch'), { base: arm.base, git: { env: arm.env } });
    expect(fs.readdirSync(arm.marks)).toContain('clean');
  });
});
