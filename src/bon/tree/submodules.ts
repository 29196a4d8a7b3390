// Submodules in an arm's tree. `git worktree add` leaves every submodule folder empty, so an arm (and its gates)
// would see a repository the user does not have. Each submodule the user has checked out is checked out in the tree
// too, at the commit HEAD records, cloned from the user's own checkout of it: nothing is fetched from its remote, no
// credential is asked for. A submodule the user has not initialized stays empty, as in their tree. One that cannot
// be checked out (the recorded commit is not in the user's copy) refuses the tree in one line.
import fs from 'node:fs';
import path from 'node:path';
import type { GitOptions } from '../../process/git.js';
import { gitx, gitMotif } from '../git/command.js';
import { WorktreeError } from './worktrees.js';

interface Submodule {
  name: string;
  path: string;
}

/** The submodules `.gitmodules` declares in `tree` (name and path), or [] when it has none. */
async function declared(tree: string, git?: GitOptions): Promise<Submodule[]> {
  if (!fs.existsSync(path.join(tree, '.gitmodules'))) return [];
  const listed = await gitx(
    tree,
    ['config', '--file', '.gitmodules', '--null', '--get-regexp', '^submodule\\..*\\.path$'],
    git,
  );
  if (listed.code !== 0) return [];
  const out: Submodule[] = [];
  for (const entry of listed.stdout.toString('utf8').split('\0')) {
    const at = entry.indexOf('\n');
    if (at < 0) continue;
    const key = entry.slice(0, at);
    out.push({ name: key.slice('submodule.'.length, -'.path'.length), path: entry.slice(at + 1) });
  }
  return out;
}

/** Whether the user has `sub` checked out: a git work tree of its own at its path. */
function checkedOut(root: string, sub: Submodule): boolean {
  const folder = path.join(root, sub.path);
  return fs.existsSync(path.join(folder, '.git'));
}

/** Checks out in `tree` every submodule the user has checked out in `root`, from the user's copy. Returns their paths. */
export async function checkOutSubmodules(root: string, tree: string, git?: GitOptions): Promise<string[]> {
  const done: string[] = [];
  for (const sub of await declared(tree, git)) {
    if (!checkedOut(root, sub)) continue;
    const source = path.join(root, sub.path);
    const args = [
      '-c',
      'protocol.file.allow=always',
      '-c',
      `submodule.${sub.name}.url=${source}`,
      'submodule',
      'update',
      '--init',
      '--no-fetch',
      '--',
      sub.path,
    ];
    let result = await gitx(tree, args, git);
    // --no-fetch needs the commit locally already; a fresh clone of the user's copy has it when the user has it.
    if (result.code !== 0)
      result = await gitx(
        tree,
        args.filter((a) => a !== '--no-fetch'),
        git,
      );
    if (result.code !== 0) {
      throw new WorktreeError(
        `submodule ${sub.path} could not be checked out in the worktree from your copy of it: ${gitMotif(result)}`,
      );
    }
    done.push(sub.path);
  }
  return done;
}
