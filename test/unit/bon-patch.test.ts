// Harvest, reset and arm refs on real temp repositories (real git): the patch carries text, binary, new and
// deleted files and nothing under specs/; the reset removes what the arm made and never an ignored file of the
// user's; the arm's ref holds the patch while the work tree and the real index stay as they were.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { armPatchFile, armRefName, harvestPatch, keepArmRef, resetTree } from '../../src/bon/patch/patch.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const BINARY = Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 37) % 256));
const BINARY_2 = Buffer.from(Array.from({ length: 700 }, (_, i) => (i * 91 + 3) % 256));

function repo(gitignore = '.env\nnode_modules/\nadws/adw_data/\n'): string {
  const r = makeTempRepo({
    files: { '.gitignore': gitignore, 'src/a.js': 'a\n', 'old.txt': 'old\n', 'specs/base.md': '# base\n' },
  });
  cleanups.push(r.cleanup);
  fs.writeFileSync(path.join(r.dir, 'logo.bin'), BINARY);
  git(r.dir, 'add', 'logo.bin');
  git(r.dir, 'commit', '-q', '-m', 'binary');
  return r.dir;
}

function write(dir: string, rel: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
}

function read(dir: string, rel: string): Buffer {
  return fs.readFileSync(path.join(dir, rel));
}

/** What an arm leaves: an edit, a deletion, new text and binary files, a changed binary, plus user files. */
function armWork(dir: string): void {
  write(dir, 'src/a.js', 'a, implemented\n');
  fs.rmSync(path.join(dir, 'old.txt'));
  write(dir, 'src/new/feature.js', 'export const f = 1;\n');
  write(dir, 'logo.bin', BINARY_2);
  write(dir, 'assets/icon.bin', BINARY.subarray(0, 300));
  write(dir, 'specs/written-by-arm.md', 'notes\n');
}

function status(dir: string): string {
  return git(dir, 'status', '--porcelain=v1', '--untracked-files=all');
}

describe('harvestPatch and resetTree', () => {
  it('round-trips an arm: the patch re-creates its tree byte for byte after the reset', async () => {
    const dir = repo();
    armWork(dir);
    const patchFile = armPatchFile(path.join(dir, 'adws', 'adw_data', 'bon', 'abcd1234'), 1);
    const harvest = await harvestPatch(dir, patchFile);
    expect(harvest.files).toEqual(['assets/icon.bin', 'logo.bin', 'old.txt', 'src/a.js', 'src/new/feature.js']);
    expect(harvest.bytes).toBe(fs.statSync(patchFile).size);
    const text = fs.readFileSync(patchFile, 'utf8');
    expect(text).toContain('GIT binary patch');
    expect(text).not.toContain('specs/');
    // Harvest unstages and leaves the work tree alone.
    expect(git(dir, 'diff', '--cached', '--name-only')).toBe('');
    expect(read(dir, 'src/a.js').toString()).toBe('a, implemented\n');

    await resetTree(dir);
    expect(status(dir)).toBe('?? specs/written-by-arm.md\n');
    expect(read(dir, 'logo.bin').equals(BINARY)).toBe(true);
    expect(read(dir, 'old.txt').toString()).toBe('old\n');
    expect(fs.existsSync(path.join(dir, 'src/new'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'assets'))).toBe(false);

    git(dir, 'apply', '--index', patchFile);
    expect(read(dir, 'logo.bin').equals(BINARY_2)).toBe(true);
    expect(read(dir, 'assets/icon.bin').equals(BINARY.subarray(0, 300))).toBe(true);
    expect(read(dir, 'src/a.js').toString()).toBe('a, implemented\n');
    expect(fs.existsSync(path.join(dir, 'old.txt'))).toBe(false);
  });

  it('never deletes ignored files the user owns, even inside a folder the arm created', async () => {
    const dir = repo();
    write(dir, '.env', 'OPENROUTER_API_KEY=secret\n');
    write(dir, 'node_modules/dep/index.js', 'module.exports = 1;\n');
    write(dir, 'adws/adw_data/sessions/ledger.jsonl', '{}\n');
    armWork(dir);
    write(dir, 'newdir/.env', 'nested\n');
    write(dir, 'newdir/plain.txt', 'arm output\n');
    write(dir, 'node_modules/dep/added-by-arm.js', 'x\n');
    const harvest = await harvestPatch(dir, path.join(dir, 'adws/adw_data/bon/x/arm-1.patch'));
    expect(harvest.files).toContain('newdir/plain.txt');
    expect(harvest.files.some((f) => f.includes('.env') || f.startsWith('node_modules') || f.startsWith('adws/'))).toBe(
      false,
    );
    await resetTree(dir);
    expect(read(dir, '.env').toString()).toBe('OPENROUTER_API_KEY=secret\n');
    expect(read(dir, 'node_modules/dep/index.js').toString()).toBe('module.exports = 1;\n');
    expect(fs.existsSync(path.join(dir, 'node_modules/dep/added-by-arm.js'))).toBe(true);
    expect(read(dir, 'adws/adw_data/sessions/ledger.jsonl').toString()).toBe('{}\n');
    expect(read(dir, 'newdir/.env').toString()).toBe('nested\n');
    expect(fs.existsSync(path.join(dir, 'newdir/plain.txt'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'adws/adw_data/bon/x/arm-1.patch'))).toBe(true);
  });

  it('keeps the factory data and specs/ even in a repo that forgot to ignore adws/adw_data', async () => {
    const dir = repo('');
    write(dir, 'adws/adw_data/sessions/ledger.jsonl', '{}\n');
    armWork(dir);
    const harvest = await harvestPatch(dir, path.join(dir, 'adws/adw_data/bon/x/arm-1.patch'));
    expect(harvest.files.some((f) => f.startsWith('adws/'))).toBe(false);
    await resetTree(dir);
    expect(read(dir, 'adws/adw_data/sessions/ledger.jsonl').toString()).toBe('{}\n');
    expect(fs.existsSync(path.join(dir, 'adws/adw_data/bon/x/arm-1.patch'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'specs/written-by-arm.md'))).toBe(true);
  });

  it('harvests in a repo that ignores specs/ itself (git refuses to exclude an ignored path by name)', async () => {
    const dir = repo('specs/\nadws/adw_data/\n');
    write(dir, 'specs/feature.md', '# f\n');
    write(dir, 'src/a.js', 'edited\n');
    const harvest = await harvestPatch(dir, path.join(dir, 'adws/adw_data/p.patch'));
    expect(harvest.files).toEqual(['src/a.js']);
    await resetTree(dir);
    expect(read(dir, 'specs/feature.md').toString()).toBe('# f\n');
    expect(status(dir)).toBe('');
  });

  it('harvests an arm that committed its work when given the base, and the reset moves HEAD back', async () => {
    const dir = repo();
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    write(dir, 'src/a.js', 'committed by the arm\n');
    git(dir, 'commit', '-q', '-am', 'arm commit');
    write(dir, 'later.txt', 'uncommitted\n');
    const harvest = await harvestPatch(dir, path.join(dir, 'adws/adw_data/p.patch'), { base });
    expect(harvest.files).toEqual(['later.txt', 'src/a.js']);
    await resetTree(dir, { base });
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(status(dir)).toBe('');
    expect(read(dir, 'src/a.js').toString()).toBe('a\n');
  });

  it('writes an empty patch when the arm changed nothing', async () => {
    const dir = repo();
    const harvest = await harvestPatch(dir, path.join(dir, 'adws/adw_data/p.patch'));
    expect(harvest).toMatchObject({ bytes: 0, files: [] });
  });
});

describe('keepArmRef', () => {
  it('stores the patch as a commit on refs/factory/<adw_id>/arm-<k> without touching the work tree or the index', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    armWork(dir);
    const patchFile = path.join(dir, 'adws/adw_data/bon/abcd1234/arm-2.patch');
    await harvestPatch(dir, patchFile);
    // The next arm's state is in the tree, with something staged: both must survive untouched.
    write(dir, 'src/a.js', 'next arm is working\n');
    git(dir, 'add', 'src/a.js');
    write(dir, 'wip.txt', 'unstaged\n');
    const before = { status: status(dir), index: git(dir, 'ls-files', '-s'), a: read(dir, 'src/a.js') };

    const kept = await keepArmRef(dir, 'abcd1234', 2, patchFile);
    expect(kept.ref).toBe('refs/factory/abcd1234/arm-2');
    expect(git(dir, 'rev-parse', kept.ref).trim()).toBe(kept.commit);
    expect(git(dir, 'rev-parse', `${kept.commit}^`).trim()).toBe(head);
    expect(git(dir, 'show', `${kept.ref}:src/a.js`)).toBe('a, implemented\n');
    const blob = execFileSync('git', ['cat-file', 'blob', `${kept.ref}:logo.bin`], { cwd: dir });
    expect(blob.equals(BINARY_2)).toBe(true);
    expect(git(dir, 'ls-tree', '-r', '--name-only', kept.ref).split('\n')).not.toContain('old.txt');
    expect(git(dir, 'ls-tree', '-r', '--name-only', kept.ref).split('\n')).not.toContain('specs/written-by-arm.md');
    // The ref's diff from HEAD is the patch itself.
    const fromRef = execFileSync('git', ['diff', '--binary', '--no-color', head, kept.ref], { cwd: dir });
    expect(fromRef.equals(read(dir, 'adws/adw_data/bon/abcd1234/arm-2.patch'))).toBe(true);

    expect({ status: status(dir), index: git(dir, 'ls-files', '-s'), a: read(dir, 'src/a.js') }).toEqual(before);
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('keeps an empty patch as HEAD’s tree, and refuses a bad ref name', async () => {
    const dir = repo();
    const patchFile = path.join(dir, 'adws/adw_data/p.patch');
    await harvestPatch(dir, patchFile);
    const kept = await keepArmRef(dir, 'abcd1234', 1, patchFile);
    expect(git(dir, 'rev-parse', `${kept.ref}^{tree}`)).toBe(git(dir, 'rev-parse', 'HEAD^{tree}'));
    expect(() => armRefName('../x', 1)).toThrow(/not an adw id/);
    expect(() => armRefName('abcd1234', 0)).toThrow(/not an arm number/);
  });
});
