// The user's tree is the user's (issue 24, point 4), on real git: an arm's patch is judged against the run's base
// commit, whatever the user did in their tree meanwhile (edited, staged, edited again, a new file); at apply time
// the patch lands around the user's own edit, and one that truly meets it is refused with the user's file intact.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyVerified, verifyPatch } from '../../src/bon/patch/apply.js';
import { harvestPatch, resetTree } from '../../src/bon/patch/patch.js';
import { git, makeTempRepo, tempDir as makeTempDir } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Twenty lines: the arm changes line 18, the user line 1 (far enough apart for git's three lines of context). */
const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]): string => `${lines.join('\n')}\n`;
const withLine = (lines: string[], n: number, value: string): string[] =>
  lines.map((l, i) => (i === n - 1 ? value : l));

function repo(): string {
  const r = makeTempRepo({ files: { '.gitignore': 'adws/adw_data/\n', 'src/long.txt': text(LINES) } });
  cleanups.push(r.cleanup);
  return r.dir;
}

const read = (dir: string, rel: string): string => fs.readFileSync(path.join(dir, rel), 'utf8');
const write = (dir: string, rel: string, content: string): void => fs.writeFileSync(path.join(dir, rel), content);

/** The arm's patch made the real way (edit, harvest, reset), then moved out of the tree as a run's bon folder is. */
async function armPatch(dir: string): Promise<string> {
  write(dir, 'src/long.txt', text(withLine(LINES, 18, 'line 18 by the arm')));
  const file = path.join(makeTempDir('factory-bon-', cleanups), 'arm-1.patch');
  await harvestPatch(dir, file);
  await resetTree(dir);
  return file;
}

describe('an arm judged against the run base, the user at work in the tree', () => {
  it('is green on HEAD although the user edited, staged and edited again the file it changes', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const file = await armPatch(dir);
    write(dir, 'src/long.txt', text(withLine(LINES, 1, 'line 1 by the user')));
    git(dir, 'add', 'src/long.txt');
    write(
      dir,
      'src/long.txt',
      text(withLine(withLine(LINES, 1, 'line 1 by the user'), 2, 'line 2 by the user, unstaged')),
    );
    write(dir, 'notes.txt', "the user's own new file\n");
    const staged = git(dir, 'ls-files', '-s');
    expect(await verifyPatch(dir, file, { base: head })).toEqual({ ok: true, paths: ['src/long.txt'] });
    // The check read neither the tree nor the index, and wrote neither.
    expect(git(dir, 'ls-files', '-s')).toBe(staged);
    expect(read(dir, 'src/long.txt')).toContain('line 2 by the user, unstaged');
  });

  it('stays green on HEAD when the user rewrites the very line the arm changed: that is met at apply time', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const file = await armPatch(dir);
    write(dir, 'src/long.txt', text(withLine(LINES, 18, 'line 18 by the user')));
    git(dir, 'add', 'src/long.txt');
    expect((await verifyPatch(dir, file, { base: head })).ok).toBe(true);
    const verdict = await verifyPatch(dir, file);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.motif).toMatch(/^patch does not apply to your tree: .*src\/long\.txt/);
  });
});

describe('the walls on the run base', () => {
  it('refuses a path through a symlink the base commit records, and not for one the user made in their tree since', async () => {
    const dir = repo();
    const outside = makeTempDir('factory-outside-', cleanups);
    fs.symlinkSync(outside, path.join(dir, 'linkdir'));
    git(dir, 'add', 'linkdir');
    git(dir, 'commit', '-q', '-m', 'a link');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const through = path.join(makeTempDir('factory-patch-', cleanups), 'arm.patch');
    fs.writeFileSync(
      through,
      'diff --git a/linkdir/evil.txt b/linkdir/evil.txt\nnew file mode 100644\n--- /dev/null\n+++ b/linkdir/evil.txt\n@@ -0,0 +1 @@\n+pwned\n',
    );
    const refused = await verifyPatch(dir, through, { base: head });
    expect(refused).toEqual({ ok: false, motif: 'patch refused: "linkdir/evil.txt" goes through the symlink linkdir' });
    // The user's own symlink, made while the arms ran, is met at apply time only.
    const file = await armPatch(dir);
    fs.rmSync(path.join(dir, 'src/long.txt'));
    fs.symlinkSync(path.join(outside, 'x'), path.join(dir, 'src/long.txt'));
    expect((await verifyPatch(dir, file, { base: head })).ok).toBe(true);
    expect(await verifyPatch(dir, file)).toEqual({
      ok: false,
      motif: 'patch refused: "src/long.txt" is a symlink in the tree',
    });
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe("applying around the user's edit", () => {
  it("keeps an unstaged edit of the user's unstaged, the patch staged", async () => {
    const dir = repo();
    const file = await armPatch(dir);
    write(dir, 'src/long.txt', text(withLine(LINES, 1, 'line 1 by the user')));
    const result = await applyVerified({ cwd: dir, patchFile: file, gates: [] });
    expect(result).toMatchObject({
      applied: true,
      how: expect.stringMatching(/^git apply, staged with git apply --cached/),
    });
    expect(read(dir, 'src/long.txt')).toBe(
      text(withLine(withLine(LINES, 1, 'line 1 by the user'), 18, 'line 18 by the arm')),
    );
    expect(git(dir, 'show', ':src/long.txt')).toBe(text(withLine(LINES, 18, 'line 18 by the arm')));
  });

  it("applies with --index over a staged edit of the user's, both kept", async () => {
    const dir = repo();
    const file = await armPatch(dir);
    write(dir, 'src/long.txt', text(withLine(LINES, 1, 'line 1 by the user')));
    git(dir, 'add', 'src/long.txt');
    const result = await applyVerified({ cwd: dir, patchFile: file, gates: [] });
    expect(result).toMatchObject({ applied: true, how: 'git apply --index' });
    const both = text(withLine(withLine(LINES, 1, 'line 1 by the user'), 18, 'line 18 by the arm'));
    expect(read(dir, 'src/long.txt')).toBe(both);
    expect(git(dir, 'show', ':src/long.txt')).toBe(both);
  });

  it("refuses a patch that meets the user's edit, in one line naming the file, and loses nothing of theirs", async () => {
    const dir = repo();
    const file = await armPatch(dir);
    write(dir, 'src/long.txt', text(withLine(LINES, 18, 'line 18 by the user')));
    git(dir, 'add', 'src/long.txt');
    write(dir, 'src/long.txt', text(withLine(withLine(LINES, 18, 'line 18 by the user'), 1, 'line 1 by the user')));
    const before = {
      tree: read(dir, 'src/long.txt'),
      index: git(dir, 'ls-files', '-s'),
      status: git(dir, 'status', '--porcelain'),
    };
    const result = await applyVerified({ cwd: dir, patchFile: file, gates: [] });
    expect(result.applied).toBe(false);
    expect(result.motif).toMatch(/^patch does not apply to your tree: .*src\/long\.txt/);
    expect(result.motif).not.toContain('\n');
    expect({
      tree: read(dir, 'src/long.txt'),
      index: git(dir, 'ls-files', '-s'),
      status: git(dir, 'status', '--porcelain'),
    }).toEqual(before);
  });
});
