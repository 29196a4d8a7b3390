// The .git guard on real repositories: everything an agent could do to the user's repository through the shared
// .git — plant a hook, a filter driver or an fsmonitor, info/attributes, alternates; add, move or delete a ref, the
// user's branch included, from a worktree; add a remote, set core.hooksPath, tag, pack the refs, stage — is named
// as an act and undone; the user's .git ends byte for byte as it began (refs, packed-refs, reflogs, index, config).
// In the user's tree (in place), a commit on the current branch is the agent's work: the tree reset undoes it, and
// putBack restores the reflogs, ORIG_HEAD and the index the reset wrote.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configActs, refActs } from '../../src/bon/git/acts.js';
import { gitDirMotif, putBack, restoreGitDir, snapshotGitDir } from '../../src/bon/git/guard.js';
import { GitWatch } from '../../src/bon/git/watch.js';
import { prepareArmTree } from '../../src/bon/tree/armTree.js';
import { harvestPatch, keepArmRef } from '../../src/bon/patch/patch.js';
import { worktreeBase } from '../../src/bon/tree/worktrees.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function repo(): string {
  const r = makeTempRepo({ files: { 'a.txt': 'a\n' } });
  cleanups.push(r.cleanup);
  git(r.dir, 'branch', 'other');
  git(r.dir, 'tag', 'v1');
  return r.dir;
}

/** A submodule at vendor/lib, committed: its git dir lives in the repository's .git/modules/. */
function withSubmodule(dir: string): void {
  const lib = makeTempRepo({ files: { 'lib.js': 'export const lib = 1;\n' } });
  cleanups.push(lib.cleanup);
  git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.dir, 'vendor/lib');
  git(dir, 'commit', '-qm', 'submodule');
}

/** Where a planted hook or filter would leave its mark: a path in a temp folder of the test's own, never /tmp itself. */
function pwnedMark(): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-guard-mark-'));
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  return path.join(base, 'pwned');
}

/** A detached worktree of `dir`, outside it, under the factory's worktree root, as the factory makes an arm's. */
function armTree(dir: string): string {
  fs.mkdirSync(worktreeBase(), { recursive: true });
  const base = fs.mkdtempSync(path.join(worktreeBase(), 'factory-guard-arm-'));
  const tree = path.join(base, 'arm_1');
  git(dir, 'worktree', 'add', '--detach', '--quiet', tree, 'HEAD');
  cleanups.push(() => {
    git(dir, 'worktree', 'remove', '--force', '--force', tree);
    fs.rmSync(base, { recursive: true, force: true });
  });
  return tree;
}

/** Every file under .git with its mode and bytes, but the object store, the factory's refs and other worktrees' admin folders. */
function dotGit(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const base = path.join(dir, '.git');
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(base, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (['objects', 'worktrees', 'COMMIT_EDITMSG', 'refs/factory', ...skip].includes(child)) continue;
      const abs = path.join(base, child);
      if (entry.isDirectory()) walk(child);
      else out[child] = `${fs.lstatSync(abs).mode.toString(8)} ${fs.readFileSync(abs).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

/** A repository whose index git will not rewrite on the next status (no racily clean entry). */
async function settled(dir: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 1100));
  git(dir, 'status', '--porcelain');
}

describe('the .git guard', () => {
  it("in worktrees: the user's branch moved from an arm's tree, a remote, core.hooksPath, a tag, packed refs and a hook are each named and undone byte for byte", async () => {
    const dir = repo();
    await settled(dir);
    const tree = armTree(dir);
    const before = dotGit(dir);
    const head = git(dir, 'rev-parse', 'HEAD');
    const snapshot = await snapshotGitDir(dir, { agentsIn: 'worktrees' });
    // The factory's own refs come and go: never an act.
    git(dir, 'update-ref', 'refs/factory/run1/arm-2', head.trim());
    git(tree, 'commit', '-q', '--allow-empty', '-m', 'the arm commits in its own tree');
    const main = git(tree, 'worktree', 'list', '--porcelain').split('\n')[0]!.slice('worktree '.length);
    git(tree, 'update-ref', git(main, 'symbolic-ref', 'HEAD').trim(), 'HEAD');
    git(tree, 'remote', 'add', 'evil', 'https://example.invalid/evil.git');
    git(tree, 'config', 'core.hooksPath', '/tmp/evil-hooks');
    git(tree, 'tag', 'evil-tag');
    git(tree, 'tag', '-d', 'v1');
    git(tree, 'pack-refs', '--all');
    fs.writeFileSync(path.join(dir, '.git/hooks/post-checkout'), `#!/bin/sh\ntouch '${pwnedMark()}'\n`, {
      mode: 0o755,
    });
    const acts = await restoreGitDir(dir, snapshot);
    expect(acts.sort()).toEqual(
      [
        '.git/hooks/post-checkout (added)',
        'added refs/tags/evil-tag',
        'added remote evil',
        'deleted refs/tags/v1',
        'moved refs/heads/main',
        'set core.hooksPath',
      ].sort(),
    );
    expect(dotGit(dir)).toEqual(before);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Left alone since: nothing more to name.
    expect(await restoreGitDir(dir, snapshot)).toEqual([]);
  });

  it("in worktrees: a submodule's git dir (hooks, config) and the user's other linked worktree's config are guarded like the rest; its HEAD is the user's to move", async () => {
    const dir = repo();
    withSubmodule(dir);
    // The user's own second worktree, beside the repo (not under the factory's worktree root).
    const userTree = `${dir}-hotfix`;
    git(dir, 'worktree', 'add', '-q', '-b', 'hotfix', userTree);
    cleanups.push(() => fs.rmSync(userTree, { recursive: true, force: true }));
    armTree(dir); // an arm of this run: its admin folder is the factory's, never read
    const before = dotGit(dir, ['worktrees']);
    const userAdmin = path.join(dir, '.git/worktrees', path.basename(userTree));
    const snapshot = await snapshotGitDir(dir, { agentsIn: 'worktrees' });
    const pwned = pwnedMark();
    fs.writeFileSync(path.join(dir, '.git/modules/vendor/lib/hooks/post-checkout'), `#!/bin/sh\ntouch '${pwned}'\n`, {
      mode: 0o755,
    });
    git(path.join(dir, 'vendor/lib'), 'config', 'core.hooksPath', '/tmp/evil-hooks');
    git(userTree, 'checkout', '-q', '--detach'); // the user, working there meanwhile
    fs.writeFileSync(path.join(userAdmin, 'config.worktree'), '[core]\n\tfsmonitor = /tmp/evil\n');
    const acts = await restoreGitDir(dir, snapshot);
    const admin = `.git/worktrees/${path.basename(userTree)}`;
    expect(acts.sort()).toEqual(
      [
        `${admin}/config.worktree (added)`,
        '.git/modules/vendor/lib/config (changed)',
        '.git/modules/vendor/lib/hooks/post-checkout (added)',
      ].sort(),
    );
    expect(dotGit(dir, ['worktrees'])).toEqual(before);
    expect(git(userTree, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('HEAD'); // still detached: the user's act
    expect(fs.existsSync(path.join(userAdmin, 'config.worktree'))).toBe(false);
    git(path.join(dir, 'vendor/lib'), 'checkout', '-q', '--detach');
    expect(fs.existsSync(pwned)).toBe(false);
  });

  it("in worktrees: what the user's index holds is guarded, its stat data refreshed by a status is not an act", async () => {
    const dir = repo();
    const tree = armTree(dir);
    const snapshot = await snapshotGitDir(dir, { agentsIn: 'worktrees' });
    const before = dotGit(dir);
    fs.utimesSync(path.join(dir, 'a.txt'), new Date(), new Date(Date.now() + 5000));
    git(dir, 'status', '--porcelain'); // refreshes the index's stat data
    expect(await restoreGitDir(dir, snapshot)).toEqual([]);
    fs.writeFileSync(path.join(dir, 'b.txt'), 'b\n');
    git(main(tree), 'add', 'b.txt');
    expect(await restoreGitDir(dir, snapshot)).toEqual(['changed the index']);
    expect(dotGit(dir)).toEqual(before);
    fs.rmSync(path.join(dir, 'b.txt'));
  });

  it('in the tree: hooks, config (filter driver, fsmonitor), info, alternates and refs are named and undone; the commit on the branch is work, and putBack ends the reflogs as they began', async () => {
    const dir = repo();
    await settled(dir);
    const before = dotGit(dir);
    const head = git(dir, 'rev-parse', 'HEAD');
    const snapshot = await snapshotGitDir(dir);
    const hook = path.join(dir, '.git/hooks/post-checkout');
    const pwned = pwnedMark();
    fs.writeFileSync(hook, `#!/bin/sh\ntouch '${pwned}'\n`, { mode: 0o755 });
    fs.chmodSync(path.join(dir, '.git/hooks/pre-commit.sample'), 0o777);
    git(dir, 'config', 'filter.evil.clean', `sh -c "touch '${pwned}'; cat"`);
    git(dir, 'config', 'core.fsmonitor', '/tmp/evil');
    fs.mkdirSync(path.join(dir, '.git/info'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git/info/attributes'), '* filter=evil\n');
    fs.mkdirSync(path.join(dir, '.git/objects/info'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git/objects/info/alternates'), '/tmp/elsewhere/objects\n');
    git(dir, 'branch', 'planted');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'work\n');
    git(dir, 'commit', '-q', '-am', 'moves main: the work, which the reset undoes');
    git(dir, 'update-ref', 'refs/heads/other', git(dir, 'rev-parse', 'HEAD').trim());
    git(dir, 'tag', '-d', 'v1');
    git(dir, 'pack-refs', '--all');
    // The agent's own commit ran its own filter; from the restore on, nothing the factory does runs it again.
    expect(fs.existsSync(pwned)).toBe(true);
    fs.rmSync(pwned);
    const acts = await restoreGitDir(dir, snapshot);
    expect(acts.sort()).toEqual(
      [
        '.git/hooks/post-checkout (added)',
        '.git/hooks/pre-commit.sample (changed)',
        '.git/info/attributes (added)',
        '.git/objects/info/alternates (added)',
        'added refs/heads/planted',
        'deleted refs/tags/v1',
        'moved refs/heads/other',
        'set core.fsmonitor',
        'set filter.evil.clean',
      ].sort(),
    );
    // The branch is back where it was (the commit's changes stay in the tree and the index for the harvest).
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    git(dir, 'reset', '-q', head.trim()); // what resetTree does, writing the reflogs and ORIG_HEAD
    git(dir, 'checkout', '--', '.');
    putBack(snapshot);
    expect(dotGit(dir)).toEqual(before);
    expect(fs.existsSync(hook)).toBe(false);
    expect(fs.existsSync(pwned)).toBe(false);
    expect(git(dir, 'log', '-1', '--format=%s').trim()).toBe('initial');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a HEAD switched to another branch is put back; a .git left alone gives no act', async () => {
    const dir = repo();
    const snapshot = await snapshotGitDir(dir);
    expect(await restoreGitDir(dir, snapshot)).toEqual([]);
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/other');
    expect(await restoreGitDir(dir, snapshot)).toEqual(['.git/HEAD (changed)']);
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
  });

  it("what the factory itself writes is no act: an arm's tree made (its submodule checked out), harvested, kept as a ref, removed", async () => {
    const dir = repo();
    withSubmodule(dir);
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-guard-trees-'));
    cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', FACTORY_WORKTREES: base };
    const snapshot = await snapshotGitDir(dir, { env, agentsIn: 'worktrees' });
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const tree = await prepareArmTree(dir, {
      run: 'rg',
      name: 'arm_1',
      commit: head,
      gateFolders: [],
      git: { env },
      env,
    });
    fs.writeFileSync(path.join(tree.dir, 'b.txt'), 'b\n');
    git(
      tree.dir,
      '-c',
      'user.name=a',
      '-c',
      'user.email=a@b',
      'commit',
      '-qm',
      'the arm commits in its own tree',
      '--allow-empty',
    );
    const patchFile = path.join(base, 'arm-1.patch');
    await harvestPatch(tree.dir, patchFile, { base: head, git: { env } });
    await keepArmRef(dir, 'rg', 1, patchFile, { base: head, git: { env } });
    await tree.release();
    expect(await restoreGitDir(dir, snapshot, { env })).toEqual([]);
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/factory/')).toBe('refs/factory/rg/arm-1\n');
  });

  it('arms at once: each act is laid on the arm whose shell ran, not on the arm whose turn ends first; shells at once both carry it, and say so', async () => {
    const dir = repo();
    const tree = armTree(dir);
    const watch = new GitWatch(dir, await snapshotGitDir(dir, { agentsIn: 'worktrees' }));
    watch.toolStart('arm_1', 'bash');
    watch.toolStart('arm_2', 'write'); // a fenced tool cannot reach the user's .git
    watch.toolStart('arm_2', 'report_phase'); // nor can the factory's own report (seen in CI: arm 2 shared the blame)
    git(tree, 'remote', 'add', 'evil', 'https://example.invalid/evil.git');
    watch.toolEnd('arm_2', 'write');
    watch.toolEnd('arm_2', 'report_phase');
    watch.toolEnd('arm_1', 'bash');
    // Arm 2 ends first: nothing of arm 1's is laid on it.
    expect(await watch.endTurn('arm_2')).toEqual([]);
    expect(await watch.endTurn('arm_1')).toEqual(['added remote evil']);
    watch.toolStart('arm_1', 'bash');
    watch.toolStart('arm_2', 'bash');
    git(tree, 'tag', 'evil-tag');
    watch.toolEnd('arm_1', 'bash');
    watch.toolEnd('arm_2', 'bash');
    expect(await watch.endTurn('arm_1')).toEqual(['added refs/tags/evil-tag (while arm_1, arm_2 ran shells at once)']);
    expect(await watch.endTurn('arm_2')).toEqual(['added refs/tags/evil-tag (while arm_1, arm_2 ran shells at once)']);
    // pi announces a shell after the fact: a check (another arm's turn ending) may find an act before the shell
    // that did it is known to run. Held, it goes to that shell when it ends, not to the turn that ended (seen in CI).
    watch.begin('arm_1');
    watch.begin('arm_2');
    git(tree, 'remote', 'add', 'late', 'https://example.invalid/late.git');
    expect(await watch.endTurn('arm_2')).toEqual([]);
    watch.toolStart('arm_1', 'bash');
    watch.toolEnd('arm_1', 'bash');
    expect(await watch.endTurn('arm_1')).toEqual(['added remote late']);
    // Found when no shell ran (a job left running): the turn that ends next carries it; one agent at a time takes all.
    git(dir, 'config', 'core.hooksPath', '/tmp/h');
    expect(await watch.endTurn()).toEqual(['set core.hooksPath']);
    expect(git(dir, 'tag', '-l', 'evil-tag')).toBe('');
  });

  it('config acts are named as a person says them: remotes added, removed, changed; variables set (as spelled) and unset', () => {
    const before = ['core.bare=false', 'remote.origin.url=https://a', 'remote.gone.url=https://g', 'user.name=x'];
    const after = [
      'core.bare=false',
      'remote.origin.url=https://b',
      'remote.evil.url=https://e',
      'remote.evil.fetch=+refs/heads/*:refs/remotes/evil/*',
      'core.hookspath=/tmp/h',
    ];
    const text = '[core]\n\tbare = false\n\thooksPath = /tmp/h\n';
    expect(configActs(before, after, text).sort()).toEqual(
      [
        'added remote evil',
        'changed remote origin',
        'removed remote gone',
        'set core.hooksPath',
        'unset user.name',
      ].sort(),
    );
    expect(
      refActs(
        new Map([
          ['refs/heads/main', 'a'],
          ['refs/tags/v1', 'b'],
        ]),
        new Map([
          ['refs/heads/main', 'c'],
          ['refs/tags/v2', 'd'],
        ]),
        undefined,
      ),
    ).toEqual(['moved refs/heads/main', 'deleted refs/tags/v1', 'added refs/tags/v2']);
    expect(
      refActs(new Map([['refs/heads/main', 'a']]), new Map([['refs/heads/main', 'c']]), 'refs/heads/main'),
    ).toEqual([]);
  });

  it('the motif names the acts on one line', () => {
    expect(
      gitDirMotif([
        'moved refs/heads/main',
        'added remote evil',
        'set core.hooksPath',
        '.git/hooks/post-checkout (added)',
      ]),
    ).toBe(
      "it changed the repository's .git (moved refs/heads/main, added remote evil, set core.hooksPath, .git/hooks/post-checkout (added)): an agent may not; undone",
    );
    expect(gitDirMotif(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'])).toMatch(/\(a, b, c, d, e, f and 2 more\)/);
  });
});

/** The user's main tree, as an arm finds it from its own. */
function main(tree: string): string {
  return git(tree, 'worktree', 'list', '--porcelain').split('\n')[0]!.slice('worktree '.length);
}
