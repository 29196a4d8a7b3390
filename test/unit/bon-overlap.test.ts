// The overlap of best-of-N arms' patches, on genuine `git diff --binary` output: a throwaway repository per test
// file, one base commit, each arm's edit staged, diffed and reset, as the arms' worktrees produce them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { armOverlap, diffStats, parseHunks, sideBySide } from '../../src/bon/harvest/overlap.js';

// The user's git configuration (colour, noprefix, autocrlf) must not shape the patches.
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

const lines = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i + 1));

/** 60 lines of a small module, a bug on line 40 (`a - b`), so hunks near the top and the bottom stay apart. */
const CALC =
  lines(60, (i) => (i === 40 ? 'export const sum = (a, b) => a - b;' : `export const v${i} = ${i};`)).join('\n') + '\n';
const OLD_SQL = ['-- the old schema', 'create table t (id int);', '-- end', ''].join('\n');
const CRLF = lines(12, (i) => `line ${i}`).join('\r\n') + '\r\n';
const PNG_A = Buffer.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...Array.from({ length: 64 }, (_, i) => (i * 7) % 256),
]);
const PNG_B = Buffer.from([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...Array.from({ length: 64 }, (_, i) => (i * 13) % 256),
]);

let dir = '';
const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: GIT_ENV, encoding: 'utf8' });

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-overlap-'));
  git('init', '-q');
  git('config', 'core.autocrlf', 'false');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src/calc.js'), CALC);
  fs.writeFileSync(path.join(dir, 'src/old.sql'), OLD_SQL);
  fs.writeFileSync(path.join(dir, 'src/dos.txt'), CRLF);
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'base');
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

type Edit = string | Buffer | null | ((old: string) => string);

/** One arm's patch: the edits applied to the base (null deletes, a function rewrites), staged, diffed, undone. */
function armPatch(edits: Record<string, Edit>, mv?: [string, string]): string {
  for (const [file, edit] of Object.entries(edits)) {
    const full = path.join(dir, file);
    if (edit === null) fs.rmSync(full);
    else if (typeof edit === 'function') fs.writeFileSync(full, edit(fs.readFileSync(full, 'utf8')));
    else {
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, edit);
    }
  }
  if (mv) git('mv', mv[0], mv[1]);
  git('add', '-A');
  const patch = git('diff', '--cached', '--binary');
  git('reset', '-q', '--hard', 'HEAD');
  git('clean', '-qfdx');
  return patch;
}

const fixSum = (text: string) => text.replace('(a, b) => a - b', '(a, b) => a + b');
const addHeader = (text: string) => `// calc: tiny numbers\n// (kept small)\n'use strict';\n${text}`;
const renameV50 = (text: string) => text.replace('export const v50 = 50;', 'export const fifty = 50;');

describe('parseHunks', () => {
  it('keys a hunk by file and change, not by its @@ offsets', () => {
    const [alone] = parseHunks(armPatch({ 'src/calc.js': fixSum }));
    const shifted = parseHunks(armPatch({ 'src/calc.js': (t) => addHeader(fixSum(t)) }));
    expect(shifted).toHaveLength(2);
    const twin = shifted[1]!;
    expect(twin.header).not.toBe(alone!.header); // +40 vs +43: the new side moved
    expect(twin.key).toBe(alone!.key);
    expect(alone).toMatchObject({ file: 'src/calc.js', header: '@@ -37,7 +37,7 @@ export const v36 = 36;' });
    expect(alone!.lines.filter((l) => /^[+-]/.test(l))).toEqual([
      '-export const sum = (a, b) => a - b;',
      '+export const sum = (a, b) => a + b;',
    ]);
    expect(shifted[0]!.key).not.toBe(alone!.key);
  });

  it('reads a new file and a deleted one; a removed `-- x` line is no file header', () => {
    const patch = armPatch({ 'src/new.js': 'export const made = 1;\nexport const also = 2;\n', 'src/old.sql': null });
    expect(patch).toContain('new file mode 100644');
    expect(patch).toContain('deleted file mode 100644');
    expect(patch).toContain('\n--- the old schema\n'); // the removed SQL comment, looking like a header
    const hunks = parseHunks(patch);
    expect(hunks.map((h) => h.file)).toEqual(['src/new.js', 'src/old.sql']);
    expect(hunks[1]!.lines).toEqual(['--- the old schema', '-create table t (id int);', '--- end']);
    expect(diffStats(patch)).toEqual({ files: ['src/new.js', 'src/old.sql'], added: 2, removed: 3 });
  });

  it('a binary file is one hunk keyed by its payload', () => {
    const a = parseHunks(armPatch({ 'img/logo.png': PNG_A }));
    const again = parseHunks(armPatch({ 'img/logo.png': PNG_A }));
    const b = parseHunks(armPatch({ 'img/logo.png': PNG_B }));
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ file: 'img/logo.png', header: 'GIT binary patch' });
    expect(a[0]!.lines[0]).toMatch(/^literal \d+$/);
    expect(again[0]!.key).toBe(a[0]!.key);
    expect(b[0]!.key).not.toBe(a[0]!.key);
  });

  it('a patch with CRLF line ends reads as the same hunks; a CRLF line equals its LF twin', () => {
    const patch = armPatch({ 'src/calc.js': (t) => addHeader(fixSum(t)) });
    const crlf = parseHunks(patch.replace(/\n/g, '\r\n'));
    const lf = parseHunks(patch);
    expect(crlf.map((h) => [h.file, h.header, h.key])).toEqual(lf.map((h) => [h.file, h.header, h.key]));
    // A CRLF file: one arm kept the \r, the other wrote the line with LF; trailing whitespace is not the change.
    const kept = armPatch({ 'src/dos.txt': (t) => t.replace('line 6\r\n', 'line six\r\n') });
    const dropped = armPatch({ 'src/dos.txt': (t) => t.replace('line 6\r\n', 'line six\n') });
    expect(kept).toContain('+line six\r\n');
    expect(parseHunks(kept)[0]!.key).toBe(parseHunks(dropped)[0]!.key);
  });

  it('a pure rename and a mode change are hunks of their own', () => {
    const renamed = parseHunks(armPatch({}, ['src/old.sql', 'src/schema.sql']));
    expect(renamed).toHaveLength(1);
    expect(renamed[0]!.file).toBe('src/schema.sql');
    expect(renamed[0]!.lines).toEqual(['similarity index 100%', 'rename from src/old.sql', 'rename to src/schema.sql']);
    fs.chmodSync(path.join(dir, 'src/calc.js'), 0o755);
    const moded = parseHunks(armPatch({}));
    expect(moded.map((h) => h.lines)).toEqual([['old mode 100644', 'new mode 100755']]);
  });

  it('the same change twice in one patch is two hunks with distinct keys', () => {
    const twice = (t: string) =>
      t
        .replace('export const v5 = 5;', 'export const v5 = 5; // x')
        .replace('export const v55 = 55;', 'export const v5 = 5; // x');
    const patch = armPatch({ 'src/calc.js': (t) => t.replace('export const v5 = 5;', 'export const v5 = 5; // x') });
    const doubled = armPatch({ 'src/calc.js': twice });
    expect(parseHunks(doubled)).toHaveLength(2);
    const overlap = armOverlap([
      { arm: 1, patch },
      { arm: 2, patch: doubled },
    ]);
    expect(overlap.shared).toHaveLength(1);
    expect(overlap.unique.get(2)).toHaveLength(1);
  });

  it('reads nothing from an empty patch or a preamble', () => {
    expect(parseHunks('')).toEqual([]);
    expect(parseHunks('From 1234 Mon Sep 17 00:00:00 2001\nSubject: fix\n\n')).toEqual([]);
    expect(diffStats('')).toEqual({ files: [], added: 0, removed: 0 });
  });
});

describe('armOverlap', () => {
  it('shares the same edit at shifted offsets, keeps partial and unique apart among three arms', () => {
    const arm1 = armPatch({ 'src/calc.js': (t) => addHeader(renameV50(fixSum(t))) });
    const arm2 = armPatch({ 'src/calc.js': fixSum });
    const arm3 = armPatch({ 'src/calc.js': (t) => renameV50(fixSum(t)), 'src/new.js': 'export const made = 1;\n' });
    const overlap = armOverlap([
      { arm: 1, patch: arm1 },
      { arm: 2, patch: arm2 },
      { arm: 3, patch: arm3 },
    ]);
    expect(overlap.shared.map((h) => h.lines.find((l) => l.startsWith('+')))).toEqual([
      '+export const sum = (a, b) => a + b;',
    ]);
    expect(overlap.partial).toHaveLength(1);
    expect(overlap.partial[0]!.arms).toEqual([1, 3]);
    expect(overlap.partial[0]!.hunk.lines).toContain('+export const fifty = 50;');
    expect(overlap.unique.get(1)!.map((h) => h.header)).toEqual(['@@ -1,3 +1,6 @@']);
    expect(overlap.unique.get(2)).toEqual([]);
    expect(overlap.unique.get(3)!.map((h) => h.file)).toEqual(['src/new.js']);
    expect(overlap.perArm.get(1)).toEqual({
      hunks: 3,
      shared: 1,
      unique: 1,
      files: ['src/calc.js'],
      added: 5,
      removed: 2,
    });
    expect(overlap.perArm.get(3)).toEqual({
      hunks: 3,
      shared: 1,
      unique: 1,
      files: ['src/calc.js', 'src/new.js'],
      added: 3,
      removed: 2,
    });
  });

  it('an arm with an empty patch takes no part in "every arm"', () => {
    const fixed = armPatch({ 'src/calc.js': fixSum });
    const overlap = armOverlap([
      { arm: 1, patch: fixed },
      { arm: 2, patch: '' },
      { arm: 3, patch: armPatch({ 'src/calc.js': (t) => addHeader(fixSum(t)) }) },
    ]);
    expect(overlap.shared).toHaveLength(1);
    expect(overlap.partial).toEqual([]);
    expect(overlap.unique.get(2)).toEqual([]);
    expect(overlap.perArm.get(2)).toEqual({ hunks: 0, shared: 0, unique: 0, files: [], added: 0, removed: 0 });
    expect(overlap.perArm.get(3)).toMatchObject({ hunks: 2, shared: 1, unique: 1 });
  });

  it('one arm with a patch shares nothing; its hunks are its own', () => {
    const overlap = armOverlap([
      { arm: 1, patch: '' },
      { arm: 2, patch: armPatch({ 'src/calc.js': fixSum }) },
    ]);
    expect(overlap.shared).toEqual([]);
    expect(overlap.unique.get(2)).toHaveLength(1);
    expect(overlap.perArm.get(2)).toMatchObject({ hunks: 1, shared: 0, unique: 1 });
  });

  it('binary files: the same bytes shared, other bytes unique', () => {
    const overlap = armOverlap([
      { arm: 1, patch: armPatch({ 'img/logo.png': PNG_A }) },
      { arm: 2, patch: armPatch({ 'img/logo.png': PNG_A }) },
      { arm: 3, patch: armPatch({ 'img/logo.png': PNG_B }) },
    ]);
    expect(overlap.shared).toEqual([]);
    expect(overlap.partial.map((p) => [p.hunk.file, p.arms])).toEqual([['img/logo.png', [1, 2]]]);
    expect(overlap.unique.get(3)!.map((h) => h.header)).toEqual(['GIT binary patch']);
    expect(overlap.perArm.get(1)).toMatchObject({ files: ['img/logo.png'], added: 0, removed: 0 });
  });

  it('a new file and a deletion made alike by two arms are shared', () => {
    const edits = { 'src/new.js': 'export const made = 1;\n', 'src/old.sql': null };
    const overlap = armOverlap([
      { arm: 1, patch: armPatch(edits) },
      { arm: 2, patch: armPatch(edits) },
    ]);
    expect(overlap.shared.map((h) => h.file)).toEqual(['src/new.js', 'src/old.sql']);
    expect(overlap.perArm.get(2)).toEqual({
      hunks: 2,
      shared: 2,
      unique: 0,
      files: ['src/new.js', 'src/old.sql'],
      added: 1,
      removed: 3,
    });
  });
});

describe('sideBySide', () => {
  it('aligns by file, then by hunk: same, one-sided and differing blocks', () => {
    const left = armPatch({ 'src/calc.js': (t) => addHeader(fixSum(t)), 'src/old.sql': null });
    const right = armPatch({
      'src/calc.js': (t) => fixSum(t).replace('export const v2 = 2;', 'export const two = 2;'),
      'src/new.js': 'export const made = 1;\n',
    });
    const rows = sideBySide(left, right);
    const files = rows.filter((r) => r.kind === 'file').map((r) => [r.left, r.right]);
    expect(files).toEqual([
      ['src/calc.js', 'src/calc.js'],
      [undefined, 'src/new.js'],
      ['src/old.sql', undefined],
    ]);
    const kinds = rows.map((r) => r.kind).filter((k, i, all) => k !== all[i - 1]);
    expect(kinds).toEqual([
      'file',
      'both-differ',
      'left',
      'same',
      'both-differ',
      'right',
      'same',
      'right',
      'same',
      'file',
      'right',
      'file',
      'left',
    ]);
    // The top of calc.js, where both arms changed something else: aligned line by line, the identical ones `same`.
    expect(rows.slice(1, 11)).toEqual([
      { kind: 'both-differ', left: '@@ -1,3 +1,6 @@', right: '@@ -1,5 +1,5 @@' },
      { kind: 'left', left: '+// calc: tiny numbers' },
      { kind: 'left', left: '+// (kept small)' },
      { kind: 'left', left: "+'use strict';" },
      { kind: 'same', left: ' export const v1 = 1;', right: ' export const v1 = 1;' },
      { kind: 'both-differ', left: ' export const v2 = 2;', right: '-export const v2 = 2;' },
      { kind: 'right', right: '+export const two = 2;' },
      { kind: 'same', left: ' export const v3 = 3;', right: ' export const v3 = 3;' },
      { kind: 'right', right: ' export const v4 = 4;' },
      { kind: 'right', right: ' export const v5 = 5;' },
    ]);
    // The fix both made: its header is the same place and size (@@ -37,7 +…,7), though arm 1's new side moved by 3.
    const fix = rows.find((r) => r.left?.startsWith('@@ -37,7'))!;
    expect(fix.kind).toBe('same');
    expect(fix.left).toMatch(/^@@ -37,7 \+40,7 @@/);
    expect(fix.right).toMatch(/^@@ -37,7 \+37,7 @@/);
    const same = rows.filter((r) => r.kind === 'same');
    expect(same.some((r) => r.left === '+export const sum = (a, b) => a + b;' && r.right === r.left)).toBe(true);
    expect(rows.filter((r) => r.kind === 'left').every((r) => r.right === undefined)).toBe(true);
    expect(rows.filter((r) => r.kind === 'right').every((r) => r.left === undefined)).toBe(true);
  });

  it('aligns two hunks of different lengths on the same lines line by line: only what differs is marked', () => {
    // Arm 1 fixes the sum and comments it (its hunk one line longer); arm 2 fixes it another way.
    const left = armPatch({
      'src/calc.js': (t) => fixSum(t).replace('export const sum', '// sum them\nexport const sum'),
    });
    const right = armPatch({ 'src/calc.js': (t) => t.replace('(a, b) => a - b', '(a, b) => b + a') });
    const rows = sideBySide(left, right);
    expect(rows).toEqual([
      { kind: 'file', left: 'src/calc.js', right: 'src/calc.js' },
      {
        kind: 'both-differ',
        left: '@@ -37,7 +37,8 @@ export const v36 = 36;',
        right: '@@ -37,7 +37,7 @@ export const v36 = 36;',
      },
      { kind: 'same', left: ' export const v37 = 37;', right: ' export const v37 = 37;' },
      { kind: 'same', left: ' export const v38 = 38;', right: ' export const v38 = 38;' },
      { kind: 'same', left: ' export const v39 = 39;', right: ' export const v39 = 39;' },
      { kind: 'same', left: '-export const sum = (a, b) => a - b;', right: '-export const sum = (a, b) => a - b;' },
      { kind: 'left', left: '+// sum them' },
      {
        kind: 'both-differ',
        left: '+export const sum = (a, b) => a + b;',
        right: '+export const sum = (a, b) => b + a;',
      },
      { kind: 'same', left: ' export const v41 = 41;', right: ' export const v41 = 41;' },
      { kind: 'same', left: ' export const v42 = 42;', right: ' export const v42 = 42;' },
      { kind: 'same', left: ' export const v43 = 43;', right: ' export const v43 = 43;' },
    ]);
  });

  it('aligns one hunk with the two of the other arm on its lines; a hunk header never faces a body line', () => {
    // Arm 1's edits of lines 40, 45 and 50 make one hunk (their contexts touch); arm 2's of 40 and 50, two.
    const left = armPatch({
      'src/calc.js': (t) => renameV50(fixSum(t)).replace('export const v45 = 45;', 'export const v45 = 4.5;'),
    });
    const right = armPatch({ 'src/calc.js': (t) => renameV50(fixSum(t)) });
    expect(parseHunks(left)).toHaveLength(1);
    expect(parseHunks(right)).toHaveLength(2);
    const rows = sideBySide(left, right).slice(1);
    expect(rows[0]).toEqual({
      kind: 'both-differ',
      left: '@@ -37,17 +37,17 @@ export const v36 = 36;',
      right: '@@ -37,7 +37,7 @@ export const v36 = 36;',
    });
    expect(rows.slice(1, 9).every((r) => r.kind === 'same')).toBe(true);
    expect(rows.slice(9, 14)).toEqual([
      { kind: 'left', left: ' export const v44 = 44;' },
      { kind: 'right', right: '@@ -47,7 +47,7 @@ export const v46 = 46;' },
      { kind: 'left', left: '-export const v45 = 45;' },
      { kind: 'left', left: '+export const v45 = 4.5;' },
      { kind: 'left', left: ' export const v46 = 46;' },
    ]);
    expect(rows.slice(14).every((r) => r.kind === 'same')).toBe(true);
    expect(rows.slice(14).map((r) => r.left)).toContain('+export const fifty = 50;');
  });

  it('shows a binary hunk by its header and size line, not its payload', () => {
    const rows = sideBySide(armPatch({ 'img/logo.png': PNG_A }), armPatch({ 'img/logo.png': PNG_B }));
    expect(rows).toHaveLength(3);
    expect(rows[1]).toEqual({ kind: 'both-differ', left: 'GIT binary patch', right: 'GIT binary patch' });
    expect(rows[2]!.left).toMatch(/^literal \d+$/);
  });

  it('is deterministic and empty for two empty patches', () => {
    const left = armPatch({ 'src/calc.js': fixSum });
    expect(sideBySide(left, left)).toEqual(sideBySide(left, left));
    expect(sideBySide(left, left).every((r) => r.kind === 'file' || r.kind === 'same')).toBe(true);
    expect(sideBySide('', '')).toEqual([]);
  });
});
