// A branch or tag of the user's that an arm made or moved in its own git (issue 38, point 2): contained, named.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ownRefActs, refsOf } from '../../src/bon/git/own.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function repo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-refs-'));
  dirs.push(dir);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'trunk');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'one');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'two');
  return dir;
}

describe("an arm that made or moved the user's refs in its own git", () => {
  it("reads loose and packed refs, and names only the user's branches and tags that changed", () => {
    const dir = repo();
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    const gitDir = path.join(dir, '.git');
    git('tag', 'v1', 'HEAD~1');
    git('pack-refs', '--all');
    const before = refsOf(gitDir);
    expect([...before.keys()].sort()).toEqual(['refs/heads/trunk', 'refs/tags/v1']);
    const user = new Set(['refs/heads/trunk', 'refs/heads/main', 'refs/tags/v1']);
    // Its own work on a branch of its own is bookkeeping; the user's names are not.
    git('branch', 'my-work');
    git('branch', 'main');
    git('update-ref', 'refs/heads/trunk', 'HEAD~1');
    const acts = ownRefActs(before, refsOf(gitDir), user);
    expect(acts.sort()).toEqual([
      'made your branch main in its own git — contained (yours is untouched)',
      'moved your branch trunk in its own git — contained (yours is untouched)',
    ]);
    expect(ownRefActs(before, before, user)).toEqual([]);
  });
});
