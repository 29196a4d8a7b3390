// The best-of-N `check` phase on real temp repositories: a clean tree (untracked specs/ tolerated) passes and
// gets its bon folder; any other change is refused by name; the arms count is bounded before anything runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { armsProblem, checkBon, validateArms } from '../../src/bon/check.js';
import { UsageError, PhaseFailure } from '../../src/contract/errors.js';
import { git, makeTempRepo } from '../helpers/repo.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function repo(): string {
  const r = makeTempRepo({
    files: { '.gitignore': '.env\nnode_modules/\nadws/adw_data/\n', 'src/a.js': 'a\n', 'specs/old.md': '# old\n' },
  });
  cleanups.push(r.cleanup);
  return r.dir;
}

function write(dir: string, rel: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
}

function opts(dir: string, extra: Partial<Parameters<typeof checkBon>[0]> = {}): Parameters<typeof checkBon>[0] {
  return {
    cwd: dir,
    specPath: 'specs/feature.md',
    arms: 3,
    dataDir: path.join(dir, 'adws', 'adw_data'),
    adwId: 'abcd1234',
    ...extra,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PhaseFailure);
  return (error as Error).message;
}

describe('checkBon', () => {
  it('passes a clean tree with untracked files under specs/ and ignored files, and creates the bon folder', async () => {
    const dir = repo();
    write(dir, 'specs/feature.md', '# add a feature\n');
    write(dir, 'specs/notes/draft.md', 'draft\n');
    write(dir, '.env', 'SECRET=1\n');
    write(dir, 'node_modules/x/index.js', '');
    const check = await checkBon(opts(dir));
    expect(check.spec).toBe(path.join('specs', 'feature.md'));
    expect(check.head).toBe(git(dir, 'rev-parse', 'HEAD').trim());
    expect(check.root).toBe(dir);
    expect(check.bonDir).toBe(path.join(dir, 'adws', 'adw_data', 'bon', 'abcd1234'));
    expect(fs.statSync(check.bonDir).isDirectory()).toBe(true);
  });

  it('refuses a changed tracked file, a staged file or an untracked file elsewhere, naming them', async () => {
    const dir = repo();
    write(dir, 'specs/feature.md', '# f\n');
    write(dir, 'src/a.js', 'changed\n');
    expect(await refusal(checkBon(opts(dir)))).toBe(
      "the work tree is not clean: src/a.js (changed) — commit or stash them first (only untracked files under specs/ and the factory's adws/adw_data/ are tolerated)",
    );
    git(dir, 'checkout', '--', 'src/a.js');
    write(dir, 'notes.txt', 'n\n');
    expect(await refusal(checkBon(opts(dir)))).toContain('not clean: notes.txt (untracked)');
    fs.rmSync(path.join(dir, 'notes.txt'));
    write(dir, 'src/b.js', 'b\n');
    git(dir, 'add', 'src/b.js');
    expect(await refusal(checkBon(opts(dir)))).toContain('not clean: src/b.js (changed)');
    expect(fs.existsSync(path.join(dir, 'adws', 'adw_data', 'bon'))).toBe(false);
  });

  it('refuses a change to a tracked file under specs/ (only untracked ones are tolerated) and lists at most three', async () => {
    const dir = repo();
    write(dir, 'specs/feature.md', '# f\n');
    write(dir, 'specs/old.md', 'edited\n');
    expect(await refusal(checkBon(opts(dir)))).toContain('specs/old.md (changed)');
    for (const n of [1, 2, 3, 4]) write(dir, `extra${n}.txt`, '');
    expect(await refusal(checkBon(opts(dir)))).toContain(
      'specs/old.md (changed), extra1.txt (untracked), extra2.txt (untracked) and 2 more',
    );
  });

  it('refuses a missing, empty or folder spec, and a folder outside git', async () => {
    const dir = repo();
    expect(await refusal(checkBon(opts(dir)))).toMatch(/^spec not found: specs\/feature\.md/);
    write(dir, 'specs/feature.md', '  \n\n');
    expect(await refusal(checkBon(opts(dir)))).toBe('spec is empty: specs/feature.md (nothing to build)');
    expect(await refusal(checkBon(opts(dir, { specPath: 'specs' })))).toBe('spec is not a file: specs');
    const plain = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-nogit-')));
    cleanups.push(() => fs.rmSync(plain, { recursive: true, force: true }));
    write(plain, 'spec.md', '# s\n');
    expect(await refusal(checkBon(opts(plain, { specPath: 'spec.md' })))).toContain('is not a git work tree');
  });

  it('refuses an arms count out of 2..5 before touching anything', async () => {
    const dir = repo();
    write(dir, 'specs/feature.md', '# f\n');
    expect(await refusal(checkBon(opts(dir, { arms: 6 })))).toBe(
      '--arms 6 is too many: at most 5 arms (each one is a full implementation)',
    );
    expect(await refusal(checkBon(opts(dir, { arms: 1 })))).toBe(
      '--arms 1 is too few: best-of-N compares at least 2 arms',
    );
    expect(fs.existsSync(path.join(dir, 'adws', 'adw_data'))).toBe(false);
  });
});

describe('validateArms', () => {
  it('accepts 2 to 5 and refuses the rest with a UsageError of one line', () => {
    expect([2, 3, 4, 5, '3'].map((n) => validateArms(n))).toEqual([2, 3, 4, 5, 3]);
    for (const bad of [0, 1, 6, 2.5, NaN, 'x', '', undefined]) {
      expect(() => validateArms(bad)).toThrow(UsageError);
      expect(armsProblem(bad)).toMatch(/^--arms [^\n]+$/);
    }
    expect(armsProblem('x')).toBe('--arms must be a whole number from 2 to 5 (got "x")');
  });
});

describe("the factory's own data", () => {
  it('does not count untracked adws/adw_data/ (a repo that forgot to ignore it) as a change', async () => {
    const repo = makeTempRepo({ files: { 'specs/x.md': '# x\n', 'README.md': '# r\n' } });
    try {
      fs.mkdirSync(path.join(repo.dir, 'adws', 'adw_data', 'sessions'), { recursive: true });
      fs.writeFileSync(path.join(repo.dir, 'adws', 'adw_data', 'sessions', 'ledger.jsonl'), '{}\n');
      const check = await checkBon({
        cwd: repo.dir,
        specPath: 'specs/x.md',
        arms: 2,
        dataDir: path.join(repo.dir, 'adws', 'adw_data'),
        adwId: 'abcd1234',
      });
      expect(check.spec).toBe('specs/x.md');
    } finally {
      repo.cleanup();
    }
  });
});
