// An arm's own tree: a repository of its own at the primer's commit, borrowing the user's objects (./repo.ts), made
// ready to work in — the user's checked-out submodules are checked out there too (./submodules.ts), the
// node loads there, the ignored files `.worktreeinclude` names are copied in, and the
// user's installed packages are reachable without their folders being the arm's to write (./dependencies.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GitOptions } from '../../process/git.js';
import { gitx, gitMotif } from '../git/command.js';
import { dependencyFolders, provideDependencies, type ScratchDependencies } from './dependencies.js';
import { copyIncluded } from './include.js';
import { checkOutSubmodules } from './submodules.js';
import { addArmRepo } from './repo.js';
import { ownGitActs, ownRefActs, readOwnGit, refsOf } from '../git/own.js';
import { WorktreeError, type Worktree } from './worktrees.js';
import { packageSource } from '../../config/paths.js';

/** The node's settings, repo-relative: the factory rewrites it in an arm's tree, so it is never part of a patch. */
export const NODE_SETTINGS = '.pi/settings.json';

function isRelativeLocal(source: unknown): source is string {
  return (
    typeof source === 'string' &&
    (source.startsWith('./') || source.startsWith('../') || source === '.' || source === '..')
  );
}

/**
 * The tree's `.pi/settings.json` with each relative local package source re-aimed at what it names from the user's
 * tree (a worktree elsewhere would resolve `../factory` to another folder, and pi would load no node). Returns
 * whether the file changed; then git is told to keep it out of the tree's status (`--skip-worktree`).
 */
export async function alignNodeSettings(userRoot: string, tree: string, git?: GitOptions): Promise<boolean> {
  const file = path.join(tree, NODE_SETTINGS);
  let settings: { packages?: unknown };
  try {
    settings = JSON.parse(fs.readFileSync(file, 'utf8')) as { packages?: unknown };
  } catch {
    return false; // no settings (or not JSON, which the doctor reports): nothing to re-aim
  }
  if (!Array.isArray(settings.packages)) return false;
  const from = path.join(userRoot, '.pi');
  const to = path.join(tree, '.pi');
  let changed = false;
  const aim = (source: string): string => {
    const next = packageSource(to, path.resolve(from, source));
    if (next !== source) changed = true;
    return next;
  };
  settings.packages = settings.packages.map((entry: unknown) => {
    if (isRelativeLocal(entry)) return aim(entry);
    if (entry && typeof entry === 'object' && isRelativeLocal((entry as { source?: unknown }).source)) {
      return { ...(entry as object), source: aim((entry as { source: string }).source) };
    }
    return entry;
  });
  if (!changed) return false;
  fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
  const hidden = await gitx(tree, ['update-index', '--skip-worktree', '--', NODE_SETTINGS], git);
  if (hidden.code !== 0)
    throw new WorktreeError(`the arm's tree could not keep its node settings apart: ${gitMotif(hidden)}`);
  return true;
}

export interface ArmTree {
  readonly dir: string;
  readonly commit: string;
  /** What `.worktreeinclude` brought in (repo-relative). */
  readonly included: readonly string[];
  /** Paths the factory changed in the tree, to leave out of the arm's patch. */
  readonly own: readonly string[];
  /** The tree's scratch folder (its programs' TMPDIR), beside it, removed with it. */
  readonly scratch: string;
  /** What its agent planted in the tree's own git since it was made (../git/own.ts). */
  ownActs(): Promise<string[]>;
  /** The user's branches and tags its agent made or moved in the tree's own git: contained, named (../git/own.ts). */
  refActs(): string[];
  /** Unlinks the shared packages, then removes the tree and its scratch; harmless twice. */
  release(): Promise<void>;
}

export interface ArmTreeOptions {
  run: string;
  name: string;
  commit: string;
  /** Folders (relative to the root) the gates run in: their node_modules chain is provided. */
  gateFolders: readonly string[];
  git?: GitOptions;
  env?: NodeJS.ProcessEnv;
}

/** The user's branches and tags (refnames): an arm that makes or moves one in its own git is named for it. */
async function userRefNames(root: string, git?: GitOptions): Promise<Set<string>> {
  const out = await gitx(root, ['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/tags'], git);
  return new Set(
    out.code === 0
      ? out.stdout
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== '')
      : [],
  );
}

/**
 * The tree's programs have its scratch as their temp folder, where pi keeps the extensions it compiled (jiti) and
 * Node its compile cache: a copy of the cockpit's own (a few MB at most) spares each arm's pi compiling them afresh,
 * and being a copy, nothing an arm writes there reaches another arm or the user's next pi.
 */
function seedCaches(scratch: string): void {
  for (const name of ['jiti', 'node-compile-cache']) {
    const from = path.join(os.tmpdir(), name);
    try {
      if (fs.statSync(from).isDirectory())
        fs.cpSync(from, path.join(scratch, name), { recursive: true, dereference: false, verbatimSymlinks: true });
    } catch {
      // no cache yet (or one being written): the arm's pi makes its own
    }
  }
}

/** Makes the arm's tree; on any failure, nothing of it is left and the error says why in one line. */
export async function prepareArmTree(root: string, opts: ArmTreeOptions): Promise<ArmTree> {
  const tree: Worktree = await addArmRepo(root, opts);
  const scratch = `${tree.dir}.tmp`;
  let dependencies: ScratchDependencies | undefined;
  try {
    await checkOutSubmodules(root, tree.dir, opts.git);
    const aligned = await alignNodeSettings(root, tree.dir, opts.git);
    const included = await copyIncluded(root, tree.dir, opts.git);
    dependencies = provideDependencies(root, tree.dir, await dependencyFolders(root, opts.gateFolders, opts.git));
    const deps = dependencies;
    const ownGit = await readOwnGit(tree.dir, opts.git);
    const refsBefore = refsOf(ownGit.gitDir);
    const userRefs = await userRefNames(root, opts.git);
    fs.mkdirSync(scratch, { recursive: true });
    seedCaches(scratch);
    return {
      dir: tree.dir,
      commit: tree.commit,
      included,
      own: aligned ? [NODE_SETTINGS] : [],
      scratch,
      ownActs: () => ownGitActs(tree.dir, ownGit, opts.git),
      refActs: () => ownRefActs(refsBefore, refsOf(ownGit.gitDir), userRefs),
      async release() {
        deps.release();
        fs.rmSync(scratch, { recursive: true, force: true });
        await tree.remove();
      },
    };
  } catch (error) {
    dependencies?.release();
    fs.rmSync(scratch, { recursive: true, force: true });
    await tree.remove();
    throw error;
  }
}
