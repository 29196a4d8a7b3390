// Hostile patches read as git reads them (issue 15 point 1) and sealed patches (issue 10 point 2), on real temp
// repositories with real git: header spellings git accepts and an older reader missed (`rename old/new`, symlink
// modes such as 120777, 0120000, `120000 junk`, an index-line mode), git's own reading as a second wall, and
// the seal: a patch whose bytes changed after the harvest is refused by every way to apply.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyVerified, verifyPatch } from '../../src/bon/patch/apply.js';
import { harvestPatch, patchDigest, readSealed, resetTree } from '../../src/bon/patch/patch.js';
import { appliedSpecialEntry, gitPatchFacts } from '../../src/bon/patch/git.js';
import { isSpecialMode, modeType, parsePatchHeaders } from '../../src/bon/patch/text.js';
import { git, makeTempRepo, tempDir as makeTempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const tempDir = (prefix: string): string => makeTempDir(prefix, cleanups);

function repo(): string {
  const r = makeTempRepo({
    files: { '.gitignore': 'adws/adw_data/\n', 'a.txt': 'a\n', 'src/sum.js': 'module.exports = (a, b) => a - b;\n' },
  });
  cleanups.push(r.cleanup);
  return r.dir;
}

function patchFile(text: string): string {
  const file = path.join(tempDir('factory-patch-'), 'arm.patch');
  fs.writeFileSync(file, text);
  return file;
}

/** Everything that tells a tree's state: status, index, HEAD, and every symlink anywhere under it. */
function state(dir: string): { status: string; index: string; head: string; links: string[] } {
  const links: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const abs = path.join(at, entry.name);
      if (entry.isSymbolicLink()) links.push(path.relative(dir, abs));
      else if (entry.isDirectory()) walk(abs);
    }
  };
  walk(dir);
  return {
    status: git(dir, 'status', '--porcelain', '--untracked-files=all'),
    index: git(dir, 'ls-files', '-s'),
    head: git(dir, 'rev-parse', 'HEAD'),
    links,
  };
}

const symlinkPatch = (mode: string, name = 'link', target = '/etc/passwd'): string =>
  `diff --git a/${name} b/${name}\nnew file mode ${mode}\nindex 0000000..1111111\n--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+${target}\n\\ No newline at end of file\n`;

describe('modes as git reads them', () => {
  it('takes the leading octal digits, so every spelling of a symlink or submodule is one', () => {
    for (const m of ['120000', '120777', '0120000', '1120000', '120000 junk', '160000', '0160000'])
      expect({ m, special: isSpecialMode(m) }).toEqual({ m, special: true });
    for (const m of ['100644', '100755', '040000', '0100644', '644', 'junk', ''])
      expect({ m, special: isSpecialMode(m) }).toEqual({ m, special: false });
    expect(modeType('120777')).toBe(0o120000);
    expect(modeType('x120000')).toBeUndefined();
  });

  it('our reader sees rename old/new as paths and every mode line (index included) that names a symlink', () => {
    const renamed = parsePatchHeaders(
      'diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename old a.txt\nrename new .git/hooks/pre-commit\n',
    );
    expect(renamed.paths.map((p) => [p.source, p.path])).toContainEqual(['rename new', '.git/hooks/pre-commit']);
    for (const line of [
      'new file mode 120777',
      'new mode 0120000',
      'old mode 120000',
      'deleted file mode 120000 ',
      'index 1111111..2222222 120000',
    ]) {
      const headers = parsePatchHeaders(`diff --git a/l b/l\n${line}\n`);
      expect({ line, link: headers.symlinkCreated }).toEqual({ line, link: 'l' });
    }
    expect(parsePatchHeaders('diff --git a/l b/l\nindex 1111111..2222222 100644\n').symlinkCreated).toBeUndefined();
  });
});

describe('hostile patches through verifyPatch and applyVerified', () => {
  it('refuses each symlink spelling and the rename-old/new escape; the tree, the index and HEAD stay as they were', async () => {
    const dir = repo();
    const before = state(dir);
    const cases = [
      symlinkPatch('120000'),
      symlinkPatch('120777'),
      symlinkPatch('0120000'),
      symlinkPatch('120000 junk'),
      symlinkPatch('1120000'),
      'diff --git a/a.txt b/x\nsimilarity index 100%\nrename old a.txt\nrename new .git/hooks/pre-commit\n',
      'diff --git a/a.txt b/x\nsimilarity index 100%\nrename old a.txt\nrename new ../escaped.txt\n',
    ];
    for (const text of cases) {
      const file = patchFile(text);
      const verdict = await verifyPatch(dir, file);
      expect({ text, ok: verdict.ok }).toEqual({ text, ok: false });
      const applied = await applyVerified({ cwd: dir, patchFile: file, gates: [] });
      expect({ text, applied: applied.applied }).toEqual({ text, applied: false });
      expect(applied.motif).toMatch(/^patch refused: /);
    }
    expect(state(dir)).toEqual(before);
    expect(fs.existsSync(path.join(dir, '..', 'escaped.txt'))).toBe(false);
    expect(fs.existsSync(path.join(dir, '.git/hooks/pre-commit'))).toBe(false);
  });

  it('git itself is asked: the paths it will write and the modes it will set', async () => {
    const dir = repo();
    const facts = await gitPatchFacts(dir, patchFile(symlinkPatch('120777', 'sub dir/l n')));
    expect(facts).toEqual({ paths: ['sub dir/l n'], specialMode: 'create mode 120777 sub dir/l n' });
    const renamed = await gitPatchFacts(
      dir,
      patchFile('diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename old a.txt\nrename new b.txt\n'),
    );
    expect(renamed).toEqual({ paths: ['b.txt'], specialMode: undefined });
    expect(await gitPatchFacts(dir, patchFile('not a patch at all\n'))).toEqual({
      motif: expect.stringMatching(/^git cannot read the patch: .*No valid patches/),
    });
  });

  it("git's index after the apply is the last word: a symlink entry is named", async () => {
    const dir = repo();
    fs.writeFileSync(path.join(dir, 'p.patch'), symlinkPatch('120777'));
    git(dir, 'apply', '--index', 'p.patch');
    expect(await appliedSpecialEntry(dir)).toMatch(/^"link" would become mode 120000 \(was 000000\)$/);
    git(dir, 'reset', '-q', '--hard');
    fs.rmSync(path.join(dir, 'p.patch'));
    expect(await appliedSpecialEntry(dir)).toBeUndefined();
  });
});

describe('sealed patches', () => {
  it('a patch changed after its harvest is refused by its seal; the sealed bytes apply', async () => {
    const dir = repo();
    fs.writeFileSync(path.join(dir, 'src/sum.js'), 'module.exports = (a, b) => a + b;\n');
    const file = path.join(dir, 'adws/adw_data/bon/abcd1234/arm-1.patch');
    const harvest = await harvestPatch(dir, file);
    await resetTree(dir);
    expect(harvest.sha256).toBe(patchDigest(fs.readFileSync(file)));
    expect(readSealed(file, harvest.sha256)).toHaveProperty('bytes');
    // A later arm rewrites the winner's patch: a change no arm was judged on.
    const sealedBytes = fs.readFileSync(file);
    fs.writeFileSync(
      file,
      `${sealedBytes.toString('utf8')}diff --git a/evil.txt b/evil.txt\nnew file mode 100644\n--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+pwned\n`,
    );
    const before = state(dir);
    const refused = await applyVerified({ cwd: dir, patchFile: file, sha256: harvest.sha256, gates: [] });
    expect(refused.applied).toBe(false);
    expect(refused.motif).toMatch(
      /^patch refused: .*arm-1\.patch changed since it was harvested \(sealed sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…\)$/,
    );
    expect(state(dir)).toEqual(before);
    expect((await verifyPatch(dir, file, { sha256: harvest.sha256 })).ok).toBe(false);
    fs.writeFileSync(file, sealedBytes);
    const applied = await applyVerified({ cwd: dir, patchFile: file, sha256: harvest.sha256, gates: [] });
    expect(applied).toMatchObject({ applied: true });
    expect(git(dir, 'diff', '--cached', '--name-only')).toBe('src/sum.js\n');
    expect(fs.existsSync(path.join(dir, 'evil.txt'))).toBe(false);
  });
});
