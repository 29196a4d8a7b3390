// Verified apply on real temp repositories (real git, real bash gates): hostile patch paths are refused by our
// own reading before git sees the patch; gates run on HEAD + patch in a scratch worktree that is always
// removed; only a green patch reaches the real tree, staged with --index.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyVerified, pathRefusal, verifyPatch } from '../../src/bon/patch/apply.js';
import { harvestPatch, resetTree } from '../../src/bon/patch/patch.js';
import { parsePatchHeaders, unquote } from '../../src/bon/patch/text.js';
import { git, makeTempRepo, tempDir as makeTempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const tempDir = (prefix: string): string => makeTempDir(prefix, cleanups);

function repo(files: Record<string, string> = {}): string {
  const r = makeTempRepo({
    files: {
      '.gitignore': 'node_modules/\nadws/adw_data/\n',
      'src/sum.js': 'module.exports = (a, b) => a - b;\n',
      ...files,
    },
  });
  cleanups.push(r.cleanup);
  return r.dir;
}

function write(dir: string, rel: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
}

function patchFile(dir: string, text: string): string {
  const file = path.join(tempDir('factory-patch-'), 'arm.patch');
  fs.writeFileSync(file, text);
  return file;
}

/** An arm's patch made the real way: edit, harvest, reset. */
async function armPatch(dir: string, edits: Record<string, string>): Promise<string> {
  for (const [rel, content] of Object.entries(edits)) write(dir, rel, content);
  const file = path.join(dir, 'adws/adw_data/bon/abcd1234/arm-1.patch');
  await harvestPatch(dir, file);
  await resetTree(dir);
  return file;
}

function snapshot(dir: string): { status: string; index: string; sum: string } {
  return {
    status: git(dir, 'status', '--porcelain', '--untracked-files=all'),
    index: git(dir, 'ls-files', '-s'),
    sum: fs.readFileSync(path.join(dir, 'src/sum.js'), 'utf8'),
  };
}

function worktrees(dir: string): string[] {
  return git(dir, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '));
}

const newFile = (target: string): string =>
  `diff --git a/${target} b/${target}\nnew file mode 100644\n--- /dev/null\n+++ b/${target}\n@@ -0,0 +1 @@\n+pwned\n`;

describe('parsePatchHeaders', () => {
  it('reads header paths only, unquotes C-quoted names, and skips hunk bodies by their counts', () => {
    const text = [
      'diff --git a/q.sql b/q.sql',
      '--- a/q.sql',
      '+++ b/q.sql',
      '@@ -1,2 +1,2 @@',
      '--- /etc/passwd',
      '+++ ../../x',
      ' select 1;',
      'diff --git "a/sp ace/caf\\303\\251" "b/sp ace/caf\\303\\251"',
      'rename from old name',
      'rename to new name',
    ].join('\n');
    const headers = parsePatchHeaders(text);
    expect(headers.paths.map((p) => [p.source, p.path])).toEqual([
      ['diff --git', 'q.sql'],
      ['diff --git', 'q.sql'],
      ['---', 'q.sql'],
      ['+++', 'q.sql'],
      ['diff --git', 'sp ace/café'],
      ['diff --git', 'sp ace/café'],
      ['rename from', 'old name'],
      ['rename to', 'new name'],
    ]);
    // A hunk claiming more lines than it has cannot hide the header that follows.
    const hiding = parsePatchHeaders(
      'diff --git a/ok b/ok\n--- a/ok\n+++ b/ok\n@@ -1,9 +1,9 @@\n x\ndiff --git a/.git/config b/.git/config\n',
    );
    expect(hiding.paths.map((p) => p.path)).toContain('.git/config');
    expect(unquote('"a\\tb\\"c" rest')).toEqual({ value: 'a\tb"c', rest: ' rest' });
    expect(parsePatchHeaders('diff --git a/l b/l\nnew file mode 120000\n').symlinkCreated).toBe('l');
  });

  it('refuses climbing, absolute and .git paths in any case', () => {
    const refuse = (raw: string, p = raw): string | undefined => pathRefusal({ raw, path: p, source: 'rename to' });
    expect(refuse('src/ok..js')).toBeUndefined();
    expect(refuse('a/../x', '../x')).toMatch(/climbs out/);
    expect(refuse('/etc/x', 'etc/x')).toMatch(/absolute/);
    expect(refuse('.GIT/config')).toMatch(/touches \.git/);
    expect(refuse('sub/.git/hooks/x')).toMatch(/touches \.git/);
  });
});

describe('verifyPatch', () => {
  it('refuses hostile paths by name before git apply runs, and the tree is untouched', async () => {
    const dir = repo();
    const outside = tempDir('factory-outside-');
    fs.symlinkSync(outside, path.join(dir, 'linkdir'));
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(dir, 'linkfile'));
    git(dir, 'add', 'linkdir', 'linkfile');
    git(dir, 'commit', '-q', '-m', 'links');
    const before = snapshot(dir);
    const cases: [string, string][] = [
      [newFile('../x'), 'patch refused: "a/../x" climbs out of the work tree (..)'],
      ['--- /dev/null\n+++ /etc/x\n@@ -0,0 +1 @@\n+pwned\n', 'patch refused: "/etc/x" is an absolute path'],
      [newFile('.git/hooks/pre-commit'), 'patch refused: "a/.git/hooks/pre-commit" touches .git/'],
      [newFile('linkdir/evil.txt'), 'patch refused: "linkdir/evil.txt" goes through the symlink linkdir'],
      [
        'diff --git a/linkfile b/linkfile\n--- a/linkfile\n+++ b/linkfile\n@@ -1 +1 @@\n-x\n+y\n',
        'patch refused: "linkfile" is a symlink in the tree',
      ],
      [
        'diff --git a/ln b/ln\nnew file mode 120000\n--- /dev/null\n+++ b/ln\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n',
        'patch refused: it makes "ln" a symlink',
      ],
      ['diff --git "a/x/../../y" "b/x/../../y"\n', 'patch refused: "a/x/../../y" climbs out of the work tree (..)'],
      ['', `patch refused: `],
    ];
    for (const [text, motif] of cases) {
      const file = patchFile(dir, text);
      const verdict = await verifyPatch(dir, file);
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.motif.startsWith(motif)).toBe(true);
    }
    expect(snapshot(dir)).toEqual(before);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(dir, '..', 'x'))).toBe(false);
  });

  it('accepts a harvested patch and lists its paths; a patch that no longer applies is refused by git apply --check', async () => {
    const dir = repo({ 'q.sql': '-- /etc/passwd\nselect 1;\n' });
    const file = await armPatch(dir, { 'src/sum.js': 'module.exports = (a, b) => a + b;\n', 'q.sql': 'select 1;\n' });
    expect(await verifyPatch(dir, file)).toEqual({ ok: true, paths: ['q.sql', 'src/sum.js'] });
    write(dir, 'src/sum.js', 'something else entirely\n');
    git(dir, 'commit', '-q', '-am', 'moved on');
    const verdict = await verifyPatch(dir, file);
    expect(verdict).toMatchObject({ ok: false });
    if (!verdict.ok) expect(verdict.motif).toMatch(/^patch does not apply to your tree: .*src\/sum\.js/);
  });
});

describe('applyVerified', () => {
  const TEST = { run: 'node -e "process.exit(require(\'./src/sum.js\')(2, 3) === 5 ? 0 : 1)"', timeoutMs: 20_000 };

  it('does not apply a patch whose gates fail in the scratch worktree, and removes the worktree', async () => {
    const dir = repo();
    const file = await armPatch(dir, { 'src/sum.js': 'module.exports = (a, b) => a * b;\n' });
    const before = snapshot(dir);
    const result = await applyVerified({
      cwd: dir,
      patchFile: file,
      gates: [
        { ...TEST, cwd: dir },
        { run: 'touch made-by-gate', cwd: dir, timeoutMs: 5000 },
      ],
    });
    expect(result.applied).toBe(false);
    expect(result.motif).toMatch(/^gates red on HEAD with the patch, not applied: `node -e .*` exited 1/);
    expect(result.gates.map((g) => g.ok)).toEqual([false, true]);
    expect(snapshot(dir)).toEqual(before);
    expect(fs.existsSync(path.join(dir, 'made-by-gate'))).toBe(false);
    expect(worktrees(dir)).toHaveLength(1);
    expect(
      fs.existsSync(path.join(dir, '.git', 'worktrees')) ? fs.readdirSync(path.join(dir, '.git', 'worktrees')) : [],
    ).toEqual([]);
  });

  it('applies a green patch with --index, judged on HEAD + patch (the gate is red on the bare tree)', async () => {
    const dir = repo({
      'pkg/check.sh': 'test -f ../node_modules/dep/index.js && test "$(basename "$(dirname "$PWD")")" = tree\n',
    });
    write(dir, 'node_modules/dep/index.js', 'module.exports = 1;\n');
    const file = await armPatch(dir, { 'src/sum.js': 'module.exports = (a, b) => a + b;\n', 'src/new.js': 'new\n' });
    const red = await applyVerified({ cwd: dir, patchFile: patchFile(dir, ''), gates: [] });
    expect(red).toMatchObject({ applied: false, gates: [] });
    const gates = [
      { ...TEST, cwd: dir },
      // Relative cwd, mapped into the worktree's pkg/; node_modules linked from the real tree.
      { run: 'bash check.sh', cwd: 'pkg', timeoutMs: 5000 },
    ];
    const result = await applyVerified({ cwd: dir, patchFile: file, gates });
    expect(result.gates.map((g) => [g.ok, g.motif])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(result).toMatchObject({ applied: true });
    expect(git(dir, 'diff', '--cached', '--name-only')).toBe('src/new.js\nsrc/sum.js\n');
    expect(fs.readFileSync(path.join(dir, 'src/sum.js'), 'utf8')).toBe('module.exports = (a, b) => a + b;\n');
    expect(fs.readFileSync(path.join(dir, 'node_modules/dep/index.js'), 'utf8')).toBe('module.exports = 1;\n');
    expect(worktrees(dir)).toHaveLength(1);
  });

  it('refuses a gate folder outside the work tree and does not apply after an interrupt', async () => {
    const dir = repo();
    const file = await armPatch(dir, { 'src/sum.js': 'module.exports = (a, b) => a + b;\n' });
    const outside = await applyVerified({
      cwd: dir,
      patchFile: file,
      gates: [{ ...TEST, cwd: tempDir('factory-elsewhere-') }],
    });
    expect(outside.applied).toBe(false);
    expect(outside.motif).toMatch(/is outside the work tree/);
    const controller = new AbortController();
    controller.abort();
    const interrupted = await applyVerified({
      cwd: dir,
      patchFile: file,
      gates: [{ ...TEST, cwd: dir }],
      signal: controller.signal,
    });
    expect(interrupted).toMatchObject({ applied: false, motif: 'interrupted by the user: the patch was not applied' });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(worktrees(dir)).toHaveLength(1);
  });
});

describe("applyVerified and the user's installed packages", () => {
  /** path → content of every file under `root` (a link as its target), never through a link. */
  function contents(root: string): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (rel: string): void => {
      for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
        const child = path.join(rel, entry.name);
        if (entry.isSymbolicLink()) out[child] = `-> ${fs.readlinkSync(path.join(root, child))}`;
        else if (entry.isDirectory()) walk(child);
        else out[child] = fs.readFileSync(path.join(root, child), 'utf8');
      }
    };
    walk('');
    return out;
  }

  it("the gates use the user's packages, root and nested, but their caches stay in the scratch tree", async () => {
    const dir = repo({ 'pkg/x/package.json': '{}\n' });
    write(dir, 'node_modules/dep/index.js', 'module.exports = 1;\n');
    write(dir, 'node_modules/.cache/runner/root', `${dir}\n`); // a cache of the user's own runs
    write(dir, 'pkg/x/node_modules/only-x/index.js', 'module.exports = 2;\n');
    const file = await armPatch(dir, { 'src/sum.js': 'module.exports = (a, b) => a + b;\n' });
    const nodeModules = () => ({
      root: contents(path.join(dir, 'node_modules')),
      nested: contents(path.join(dir, 'pkg/x/node_modules')),
    });
    const before = nodeModules();
    // Each gate needs the packages, must not see the user's cache, and writes a cache keyed by its own folder.
    const gates = [
      {
        run: 'test ! -e node_modules/.cache && node -e "require(\'dep\')" && mkdir -p node_modules/.cache/runner && pwd > node_modules/.cache/runner/root',
        cwd: '.',
        timeoutMs: 10_000,
      },
      {
        run: "node -e \"require('only-x'); require('dep')\" && mkdir -p node_modules/.cache/runner && pwd > node_modules/.cache/runner/nested",
        cwd: 'pkg/x',
        timeoutMs: 10_000,
      },
    ];
    const result = await applyVerified({ cwd: dir, patchFile: file, gates });
    expect(result.gates.map((g) => [g.ok, g.motif])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(result.applied).toBe(true);
    expect(nodeModules()).toEqual(before);
    expect(worktrees(dir)).toHaveLength(1);
  });
});
