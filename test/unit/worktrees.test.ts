// The factory's own trees, on real git: each a repository of its own (the user's objects borrowed) at the commit,
// outside the user's tree, removed without a trace, swept after a killed run (a real SIGKILL of the process that made
// them), refused with one line where git cannot. No `git worktree list` of the user's ever names one.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addArmRepo } from '../../src/bon/tree/repo.js';
import { listWorktrees, repoKey, sweepWorktrees, WorktreeError } from '../../src/bon/tree/worktrees.js';
import { copyIncluded, parseInclude } from '../../src/bon/tree/include.js';
import { prepareArmTree } from '../../src/bon/tree/armTree.js';
import { git, makeTempRepo, tempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const SAFE = { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } };

function setup(files: Record<string, string> = { 'src/a.js': 'export const a = 1;\n' }) {
  const repo = makeTempRepo({ files });
  cleanups.push(repo.cleanup);
  const base = tempDir('factory-wt-base-', cleanups);
  const env = { ...SAFE.env, FACTORY_WORKTREES: base };
  const head = git(repo.dir, 'rev-parse', 'HEAD').trim();
  return { root: repo.dir, base, env, head, opts: { git: { env }, env } };
}

describe('worktrees', () => {
  it('makes a tree with a git of its own at the commit outside the tree, runs no hook of the user, and leaves no trace', async () => {
    const { root, base, head, opts } = setup();
    fs.writeFileSync(path.join(root, '.git', 'hooks', 'post-checkout'), '#!/bin/sh\ntouch "$GIT_DIR/../hook-ran"\n', {
      mode: 0o755,
    });
    fs.writeFileSync(path.join(root, 'src', 'a.js'), 'export const a = 2; // the user is editing\n');
    const branches = git(root, 'branch', '--list');
    const tree = await addArmRepo(root, { run: 'r1', name: 'arm_1', commit: head, ...opts });
    expect(tree.dir.startsWith(fs.realpathSync(base))).toBe(true);
    expect(tree.dir).toBe(path.join(fs.realpathSync(base), repoKey(root), 'r1', 'arm_1'));
    expect(fs.readFileSync(path.join(tree.dir, 'src', 'a.js'), 'utf8')).toBe('export const a = 1;\n'); // the commit, not the user's edit
    expect(git(tree.dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(spawnSync('git', ['symbolic-ref', '-q', 'HEAD'], { cwd: tree.dir }).status).toBe(1); // detached: no branch
    expect(git(tree.dir, 'rev-parse', '--git-common-dir').trim()).toBe('.git'); // its own, not the user's
    expect(git(tree.dir, 'status', '--porcelain')).toBe('');
    expect(await listWorktrees(root, opts.git)).toEqual([]);
    expect(git(root, 'branch', '--list')).toBe(branches);
    expect(fs.existsSync(path.join(root, 'hook-ran'))).toBe(false);
    await tree.remove();
    await tree.remove();
    expect(await listWorktrees(root, opts.git)).toEqual([]);
    expect(fs.existsSync(path.join(fs.realpathSync(base), repoKey(root), 'r1'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'src', 'a.js'), 'utf8')).toContain('the user is editing');
  });

  it('many trees of one run made and removed at once all succeed, made and gone in any order', async () => {
    const { root, base, head, opts } = setup();
    const runDir = path.join(fs.realpathSync(base), repoKey(root), 'rc');
    const first = await addArmRepo(root, { run: 'rc', name: 'prime', commit: head, ...opts });
    // The primer's tree goes while the arms' are being made: the run's folder must outlive it for them.
    const making = Array.from({ length: 8 }, (_, i) =>
      addArmRepo(root, { run: 'rc', name: `arm_${i + 1}`, commit: head, ...opts }),
    );
    await first.remove();
    const trees = await Promise.all(making);
    for (const t of trees) expect(git(t.dir, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(fs.readdirSync(runDir).sort()).toEqual(['owner.json', ...trees.map((t) => path.basename(t.dir))].sort());
    await Promise.all(trees.map((t) => t.remove()));
    expect(fs.existsSync(runDir)).toBe(false);
  });

  it('refuses in one line: a bare repository, a commit that does not exist', async () => {
    const { root, head, opts } = setup();
    const bare = tempDir('factory-bare-', cleanups);
    git(bare, 'clone', '-q', '--bare', root, 'b.git');
    await expect(
      addArmRepo(path.join(bare, 'b.git'), { run: 'r', name: 'arm_1', commit: head, ...opts }),
    ).rejects.toThrow(/^no tree for arm_1: a bare repository has no work tree/);
    const error = await addArmRepo(root, { run: 'r', name: 'arm_2', commit: '0'.repeat(40), ...opts }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorktreeError);
    expect((error as Error).message).toMatch(/^no tree for arm_2: the commit 0{40} is not in the repository/);
    expect((error as Error).message).not.toContain('\n');
    expect(await listWorktrees(root, opts.git)).toEqual([]);
  });

  it("a shallow clone makes worktrees; the user's checked-out submodules are checked out from their copy, an uninitialized one stays empty", async () => {
    const { root, base, opts } = setup();
    const lib = makeTempRepo({ files: { 'lib.js': 'export const lib = 1;\n' } });
    cleanups.push(lib.cleanup);
    const other = makeTempRepo({ files: { 'other.js': 'export const other = 1;\n' } });
    cleanups.push(other.cleanup);
    for (const [url, at] of [
      [lib.dir, 'vendor/lib'],
      [other.dir, 'vendor/other'],
    ] as const)
      git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', url, at);
    git(root, 'commit', '-qm', 'submodules');
    // The user has vendor/lib checked out but not vendor/other; the remote of vendor/lib is gone.
    git(root, 'submodule', 'deinit', '-q', '--', 'vendor/other');
    fs.rmSync(lib.dir, { recursive: true, force: true });
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const tree = await prepareArmTree(root, { run: 'rs', name: 'arm_1', commit: head, gateFolders: [], ...opts });
    try {
      expect(fs.readFileSync(path.join(tree.dir, 'vendor/lib/lib.js'), 'utf8')).toBe('export const lib = 1;\n');
      expect(fs.readdirSync(path.join(tree.dir, 'vendor/other'))).toEqual([]);
      expect(git(tree.dir, 'status', '--porcelain')).toBe('');
    } finally {
      await tree.release();
    }
    // A shallow clone of the repository: its worktrees work the same.
    const shallowBase = tempDir('factory-shallow-', cleanups);
    git(shallowBase, 'clone', '-q', '--depth', '1', `file://${root}`, 'shallow');
    const shallow = path.join(shallowBase, 'shallow');
    const shallowTree = await addArmRepo(shallow, {
      run: 'rs2',
      name: 'arm_1',
      commit: git(shallow, 'rev-parse', 'HEAD').trim(),
      ...opts,
    });
    expect(fs.readFileSync(path.join(shallowTree.dir, 'src/a.js'), 'utf8')).toBe('export const a = 1;\n');
    expect(git(shallowTree.dir, 'log', '--oneline').trim().split('\n')).toHaveLength(1); // the shallow boundary came along
    await shallowTree.remove();
    expect(await listWorktrees(root, opts.git)).toEqual([]);
    expect(fs.readdirSync(base).flatMap((d) => fs.readdirSync(path.join(base, d)))).toEqual([]);
  });

  it("a submodule whose recorded commit the user's copy lacks refuses the tree in one line, leaving nothing", async () => {
    const { root, opts } = setup();
    const lib = makeTempRepo({ files: { 'lib.js': 'v1\n' } });
    cleanups.push(lib.cleanup);
    git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib.dir, 'vendor/lib');
    git(root, 'commit', '-qm', 'submodule');
    // HEAD records a commit made in a clone the user never fetched from.
    const ahead = tempDir('factory-ahead-', cleanups);
    git(ahead, 'clone', '-q', lib.dir, 'lib');
    fs.writeFileSync(path.join(ahead, 'lib', 'lib.js'), 'v2\n');
    git(path.join(ahead, 'lib'), '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'v2');
    const v2 = git(path.join(ahead, 'lib'), 'rev-parse', 'HEAD').trim();
    git(root, 'update-index', '--cacheinfo', `160000,${v2},vendor/lib`);
    git(root, 'commit', '-qm', 'bump the submodule');
    const head = git(root, 'rev-parse', 'HEAD').trim();
    const error = await prepareArmTree(root, {
      run: 'rf',
      name: 'arm_1',
      commit: head,
      gateFolders: [],
      ...opts,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorktreeError);
    expect((error as Error).message).toMatch(
      /^submodule vendor\/lib could not be checked out in the worktree from your copy of it: /,
    );
    expect((error as Error).message).not.toContain('\n');
    expect(await listWorktrees(root, opts.git)).toEqual([]);
  });

  it('the sweep removes what a SIGKILLed run left and keeps a live run’s worktrees', async () => {
    const { root, head, env, opts } = setup();
    const live = await addArmRepo(root, { run: 'alive', name: 'arm_1', commit: head, ...opts });
    // A real run, killed with SIGKILL once its worktrees exist.
    const module = path.resolve('dist/src/bon/tree/repo.js');
    const script = `const m = await import(${JSON.stringify(module)}); for (const n of ['arm_1','arm_2']) await m.addArmRepo(${JSON.stringify(root)}, { run: 'killed', name: n, commit: ${JSON.stringify(head)}, git: { env: process.env }, env: process.env }); console.log('ready'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.on('exit', (code) => reject(new Error(`the child ended early (${code})`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const killed = path.join(path.dirname(path.dirname(live.dir)), 'killed');
    expect(fs.readdirSync(killed).sort()).toEqual(['arm_1', 'arm_2', 'owner.json']);
    const removed = await sweepWorktrees(root, opts);
    expect(removed.map((p) => path.basename(p)).sort()).toEqual(['arm_1', 'arm_2']);
    expect(removed.every((p) => p.includes(`${path.sep}killed${path.sep}`))).toBe(true);
    expect(fs.existsSync(killed)).toBe(false);
    expect(fs.existsSync(live.dir)).toBe(true);
    await live.remove();
    expect(await sweepWorktrees(root, opts)).toEqual([]);
  });

  it('the sweep also clears runs of repositories that are gone, and nothing of a repository still there', async () => {
    const { root, base, head, opts } = setup();
    const other = makeTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(other.cleanup);
    const gone = makeTempRepo({ files: { 'b.txt': 'b\n' } });
    const kept = await addArmRepo(other.dir, {
      run: 'r2',
      name: 'arm_1',
      commit: git(other.dir, 'rev-parse', 'HEAD').trim(),
      ...opts,
    });
    const orphan = await addArmRepo(gone.dir, {
      run: 'r3',
      name: 'arm_1',
      commit: git(gone.dir, 'rev-parse', 'HEAD').trim(),
      ...opts,
    });
    for (const dir of [path.dirname(kept.dir), path.dirname(orphan.dir)]) {
      fs.writeFileSync(
        path.join(dir, 'owner.json'),
        JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(dir, 'owner.json'), 'utf8')), pid: 2 ** 22 + 1 }),
      );
    }
    gone.cleanup(); // the repository is deleted, its run's folder stays behind
    fs.mkdirSync(path.join(fs.realpathSync(base), 'empty-0000000000')); // an empty repository folder of an old run
    await sweepWorktrees(root, opts);
    expect(fs.existsSync(orphan.dir)).toBe(false);
    expect(fs.existsSync(path.join(fs.realpathSync(base), 'empty-0000000000'))).toBe(false);
    expect(fs.existsSync(kept.dir)).toBe(true); // its repository is there: its own next run sweeps it
    expect(head).toBeTruthy();
  });

  it('a reused pid is not taken for the run that recorded it', async () => {
    const { root, head, base, opts } = setup();
    const tree = await addArmRepo(root, { run: 'old', name: 'arm_1', commit: head, ...opts });
    const owner = path.join(fs.realpathSync(base), repoKey(root), 'old', 'owner.json');
    // This very process, but recorded with another start time: the pid was reused by someone else.
    fs.writeFileSync(owner, JSON.stringify({ pid: process.pid, started: '1', root }));
    expect(await sweepWorktrees(root, opts)).toEqual([tree.dir]);
  });
});

describe('.worktreeinclude', () => {
  it('parses entries: comments, blanks, ./ and trailing slashes', () => {
    expect(parseInclude('# secrets\n.env\n\n./config/local/ # the dev config\n*.local\r\n')).toEqual([
      '.env',
      'config/local',
      '*.local',
    ]);
  });

  it('copies named ignored files and globbed ones, never as links, and refuses in one line what it must not copy', async () => {
    const { root, head, opts } = setup({ '.gitignore': '.env\n*.local\nconf/\n', 'src/a.js': 'x\n' });
    fs.writeFileSync(path.join(root, '.env'), 'API_KEY=sk-test\n');
    fs.writeFileSync(path.join(root, 'db.local'), 'local db\n');
    fs.mkdirSync(path.join(root, 'conf'));
    fs.writeFileSync(path.join(root, 'conf', 'dev.json'), '{}\n');
    fs.symlinkSync(path.join(root, 'src'), path.join(root, 'conf', 'back-to-user'));
    fs.writeFileSync(path.join(root, '.worktreeinclude'), '.env\n*.local\nconf/\n');
    const tree = await addArmRepo(root, { run: 'inc', name: 'arm_1', commit: head, ...opts });
    cleanups.push(() => void tree.remove());
    expect(await copyIncluded(root, tree.dir, opts.git)).toEqual(['.env', 'conf', 'db.local']);
    expect(fs.readFileSync(path.join(tree.dir, '.env'), 'utf8')).toBe('API_KEY=sk-test\n');
    expect(fs.lstatSync(path.join(tree.dir, '.env')).isSymbolicLink()).toBe(false);
    expect(fs.existsSync(path.join(tree.dir, 'conf', 'dev.json'))).toBe(true);
    expect(fs.existsSync(path.join(tree.dir, 'conf', 'back-to-user'))).toBe(false);
    // Writing the copy leaves the user's file as it was.
    fs.writeFileSync(path.join(tree.dir, '.env'), 'changed by an arm\n');
    expect(fs.readFileSync(path.join(root, '.env'), 'utf8')).toBe('API_KEY=sk-test\n');

    for (const [text, motif] of [
      ['config/missing.env\n', /^\.worktreeinclude names config\/missing\.env, which does not exist in /],
      ['../outside\n', /^\.worktreeinclude: "\.\.\/outside" climbs out of the repository: not copied$/],
      ['.git/config\n', /is inside \.git: not copied$/],
      ['/etc/passwd\n', /is absolute: not copied$/],
    ] as const) {
      fs.writeFileSync(path.join(root, '.worktreeinclude'), text);
      await expect(copyIncluded(root, tree.dir, opts.git)).rejects.toThrow(motif);
    }
    fs.symlinkSync(path.join(root, '.env'), path.join(root, 'link.local'));
    fs.writeFileSync(path.join(root, '.worktreeinclude'), '*.local\n');
    await expect(copyIncluded(root, tree.dir, opts.git)).rejects.toThrow(
      /^\.worktreeinclude: link\.local is a symbolic link: not copied$/,
    );
    expect(spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).stdout).toContain(
      '.worktreeinclude',
    );
  });
});
