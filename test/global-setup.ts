// bon's default worktree root, `<tmp>/factory-worktrees`, is this test run's own folder, removed at its end: a bon
// run removes its own folder, and the per-repository folder above it stays, as it does for a user. A run folder still
// there at the end is a test that did not clean up: the teardown names it and fails the run. A developer's own
// FACTORY_WORKTREES is kept.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-tests-'));
  const worktrees = path.join(root, 'worktrees');
  const ours = process.env.FACTORY_WORKTREES === undefined;
  process.env.FACTORY_WORKTREES ??= worktrees;
  return () => {
    const left: string[] = [];
    if (ours && fs.existsSync(worktrees)) {
      for (const repo of fs.readdirSync(worktrees)) {
        for (const run of fs.readdirSync(path.join(worktrees, repo))) left.push(path.join(repo, run));
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
    if (left.length > 0)
      throw new Error(`tests left ${left.length} bon run folder(s) in the worktree root: ${left.join(', ')}`);
  };
}
