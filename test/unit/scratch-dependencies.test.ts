// The user's installed packages in a scratch tree, on real folders: each node_modules is a real folder of links
// to the user's entries, tool-written state (caches) is not shared, so whatever a gate writes there stays in the
// scratch tree; release removes the links (never what they point to), then the folders made.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dependencyFolders, isSharedEntry, provideDependencies } from '../../src/bon/tree/dependencies.js';
import { makeTempRepo, tempDir as makeTempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const tempDir = (prefix: string): string => makeTempDir(prefix, cleanups);

function write(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

/** path → content hash (a link as its target) of every file under `root`, never through a link. */
function checksum(root: string): Record<string, string> {
  const sums: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      const abs = path.join(root, child);
      if (entry.isSymbolicLink()) sums[child] = `-> ${fs.readlinkSync(abs)}`;
      else if (entry.isDirectory()) walk(child);
      else sums[child] = createHash('sha256').update(fs.readFileSync(abs)).digest('hex');
    }
  };
  walk('');
  return sums;
}

/** A user's tree as npm leaves it: packages, a scope, .bin, npm's metadata, and tool state from earlier runs. */
function userTree(): string {
  const user = tempDir('factory-user-');
  write(user, {
    'package.json': '{"type":"module"}\n',
    'node_modules/dep/package.json': '{"name":"dep","main":"index.js"}\n',
    'node_modules/dep/index.js': 'module.exports = "dep from the user";\n',
    'node_modules/@scope/kit/package.json': '{"name":"@scope/kit","main":"index.js"}\n',
    'node_modules/@scope/kit/index.js': 'module.exports = "kit";\n',
    'node_modules/dep/bin.js': '#!/usr/bin/env node\nconsole.log("dep bin");\n',
    'node_modules/.package-lock.json': '{"lockfileVersion":3}\n',
    'node_modules/.cache/runner/index.json': '{"root":"/home/user/tree"}\n',
    'node_modules/.vite/deps/_metadata.json': '{}\n',
    'node_modules/.vitest/results.json': '{}\n',
    'packages/x/package.json': '{}\n',
    'packages/x/node_modules/only-x/package.json': '{"name":"only-x","main":"index.js"}\n',
    'packages/x/node_modules/only-x/index.js': 'module.exports = "only in x";\n',
    'packages/x/node_modules/.cache/runner/old': 'stale\n',
  });
  fs.mkdirSync(path.join(user, 'node_modules/.bin'));
  fs.symlinkSync('../dep/bin.js', path.join(user, 'node_modules/.bin/dep'));
  fs.chmodSync(path.join(user, 'node_modules/dep/bin.js'), 0o755);
  return user;
}

/** A scratch tree holding the tracked files only (what a worktree checkout gives). */
function scratchTree(): string {
  const scratch = tempDir('factory-scratch-');
  write(scratch, { 'package.json': '{"type":"module"}\n', 'packages/x/package.json': '{}\n' });
  return scratch;
}

const node = (cwd: string, code: string): string =>
  execFileSync(process.execPath, ['-e', code], { cwd, encoding: 'utf8' }).trim();

describe('isSharedEntry', () => {
  it("shares packages, scopes and the package managers' metadata, not the state tools write at run time", () => {
    for (const name of [
      'dep',
      '@scope',
      '.bin',
      '.pnpm',
      '.package-lock.json',
      '.modules.yaml',
      '.yarn-state.yml',
      '.yarn-integrity',
    ])
      expect(isSharedEntry(name), name).toBe(true);
    for (const name of ['.cache', '.vite', '.vitest', '.eslintcache', '.prisma', '.tmp'])
      expect(isSharedEntry(name), name).toBe(false);
  });
});

describe('provideDependencies', () => {
  it("makes each node_modules a real folder of links to the user's entries, caches left out", () => {
    const user = userTree();
    const scratch = scratchTree();
    const deps = provideDependencies(user, scratch, ['.', 'packages/x']);
    expect(deps.folders).toEqual([path.join(scratch, 'node_modules'), path.join(scratch, 'packages/x/node_modules')]);
    const root = path.join(scratch, 'node_modules');
    expect(fs.lstatSync(root).isDirectory()).toBe(true);
    expect(fs.readdirSync(root).sort()).toEqual(['.bin', '.package-lock.json', '@scope', 'dep']);
    for (const name of fs.readdirSync(root))
      expect(fs.readlinkSync(path.join(root, name))).toBe(path.join(user, 'node_modules', name));
    expect(fs.readdirSync(path.join(scratch, 'packages/x/node_modules'))).toEqual(['only-x']);
    // Node resolves the packages from the scratch tree, the nested one's from its own node_modules; .bin works.
    expect(node(scratch, 'console.log(require("dep"), require("@scope/kit"))')).toBe('dep from the user kit');
    expect(node(path.join(scratch, 'packages/x'), 'console.log(require("only-x"), require("dep"))')).toBe(
      'only in x dep from the user',
    );
    expect(execFileSync(path.join(root, '.bin/dep'), { encoding: 'utf8' }).trim()).toBe('dep bin');
    deps.release();
  });

  it("keeps what a gate writes under node_modules in the scratch tree; release leaves the user's tree as it was", () => {
    const user = userTree();
    const scratch = scratchTree();
    const before = checksum(user);
    const deps = provideDependencies(user, scratch, ['.', 'packages/x']);
    // A runner's cache, keyed by the scratch tree's paths, and a cache entry that links back into a package.
    write(scratch, {
      'node_modules/.cache/runner/index.json': JSON.stringify({ root: scratch }),
      'packages/x/node_modules/.cache/runner/new': 'x',
    });
    fs.symlinkSync(path.join(user, 'node_modules/dep'), path.join(scratch, 'node_modules/.cache/runner/dep-link'));
    expect(checksum(user)).toEqual(before);
    deps.release();
    expect(fs.existsSync(path.join(scratch, 'node_modules'))).toBe(false);
    expect(fs.existsSync(path.join(scratch, 'packages/x/node_modules'))).toBe(false);
    expect(fs.readdirSync(scratch).sort()).toEqual(['package.json', 'packages']);
    // Nothing was followed: every package of the user's is still there, unchanged.
    expect(checksum(user)).toEqual(before);
    deps.release(); // twice is harmless
  });

  it('a link a gate replaced by a real folder: written in the scratch tree only, removed with its folder', () => {
    const user = userTree();
    const scratch = scratchTree();
    const deps = provideDependencies(user, scratch, ['.']);
    const before = checksum(user);
    fs.unlinkSync(path.join(scratch, 'node_modules/dep'));
    write(scratch, { 'node_modules/dep/index.js': 'replaced in the scratch tree\n' });
    deps.release();
    expect(fs.existsSync(path.join(scratch, 'node_modules'))).toBe(false);
    expect(checksum(user)).toEqual(before);
  });

  it('adds links next to node_modules entries the checkout already holds, and leaves those at release', () => {
    const user = userTree();
    const scratch = scratchTree();
    write(scratch, { 'node_modules/patched/index.js': 'tracked in the repo\n' });
    const deps = provideDependencies(user, scratch, ['.']);
    expect(deps.folders).toEqual([]);
    expect(fs.readdirSync(path.join(scratch, 'node_modules')).sort()).toEqual([
      '.bin',
      '.package-lock.json',
      '@scope',
      'dep',
      'patched',
    ]);
    deps.release();
    expect(fs.readdirSync(path.join(scratch, 'node_modules'))).toEqual(['patched']);
  });

  it('skips folders that the user has no node_modules in, that the scratch tree lacks, that escape, or lie behind a link', () => {
    const user = userTree();
    const scratch = scratchTree();
    write(user, { 'packages/gone/node_modules/a/index.js': '' });
    const deps = provideDependencies(user, scratch, [
      'src',
      'packages/gone',
      '..',
      path.join(user, 'packages/x'),
      '.',
      'node_modules/dep',
    ]);
    expect(deps.folders).toEqual([path.join(scratch, 'node_modules')]);
    // `node_modules/dep` is one of our links: nothing may be made through it, in the user's package.
    expect(fs.existsSync(path.join(user, 'node_modules/dep/node_modules'))).toBe(false);
    expect(fs.existsSync(path.join(scratch, 'packages/gone'))).toBe(false);
    deps.release();
  });

  it('serves a pnpm layout: relative links into the virtual store resolve from the scratch tree', () => {
    const user = tempDir('factory-pnpm-');
    write(user, {
      'node_modules/.pnpm/dep@1.0.0/node_modules/dep/package.json': '{"name":"dep","main":"index.js"}\n',
      'node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.js': 'module.exports = "from the store";\n',
      'node_modules/.modules.yaml': 'layoutVersion: 5\n',
    });
    fs.symlinkSync('.pnpm/dep@1.0.0/node_modules/dep', path.join(user, 'node_modules/dep'));
    const scratch = tempDir('factory-scratch-');
    const deps = provideDependencies(user, scratch, ['.']);
    expect(fs.readdirSync(path.join(scratch, 'node_modules')).sort()).toEqual(['.modules.yaml', '.pnpm', 'dep']);
    expect(node(scratch, 'console.log(require("dep"))')).toBe('from the store');
    deps.release();
    expect(fs.existsSync(path.join(user, 'node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.js'))).toBe(true);
  });
});

describe('dependencyFolders', () => {
  it('lists the root, each gate folder with its parents, and every folder holding an ignored node_modules', async () => {
    const repo = makeTempRepo({
      files: {
        '.gitignore': 'node_modules/\n',
        'packages/x/package.json': '{}\n',
        'packages/y/sub/a.js': '',
        'docs/a.md': '',
      },
    });
    cleanups.push(repo.cleanup);
    write(repo.dir, {
      'node_modules/dep/index.js': '',
      'node_modules/dep/node_modules/inner/index.js': '',
      'packages/x/node_modules/only-x/index.js': '',
    });
    const folders = await dependencyFolders(repo.dir, ['packages/y/sub', '../elsewhere']);
    expect(folders.sort()).toEqual(['.', 'packages', 'packages/x', 'packages/y', 'packages/y/sub']);
  });
});
