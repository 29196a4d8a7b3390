// The factory's own git for reading an arm's tree. An arm's bash can write the repository's shared config (a
// `filter.<x>.clean` driver, `core.fsmonitor`…), `info/attributes`, `.gitattributes` in its tree and `~/.gitconfig`;
// a `git add` or `git status` of ours in that tree would then run the program it named, in the cockpit's process
// tree, outside any arm's turn. A list of disabled settings (SAFE_GIT_CONFIG) cannot name every driver an arm can
// invent, so this git reads none of those files by construction: a git dir of the factory's own, in the temp
// folder, whose config is empty, whose hooks folder does not exist, whose objects are the repository's, borrowed
// read-only through `objects/info/alternates` (new blobs of the harvest stay in the private store), and whose index
// is read from the run's base commit; no system or global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null).
// A `.gitattributes` of the tree may still say `filter=x`: with no `filter.x` configured anywhere git reads, it
// names nothing. What the user's global config would add to ignoring (core.excludesFile) is carried over as a path.
//
// What this git does not read of the user's setup either: their global core.autocrlf / core.eol and their global
// filters (git-lfs). A patch is then the tree's bytes as they are, which is what an arm wrote.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GitOptions } from '../../process/git.js';
import { gitx, gitxOk, gitxText } from './command.js';
import { makeScratch } from '../../process/scratch.js';

export interface PrivateGit {
  /** Options that make every git of ours (gitx, treeState…) use the private git dir on the arm's tree. */
  git: GitOptions;
  /** Removes the private git dir. Idempotent. */
  release(): void;
}

/** The user's global ignore file, as their own git would find it (read before the factory's git stops reading it). */
async function globalExcludes(root: string, git: GitOptions | undefined): Promise<string | undefined> {
  const named = await gitx(root, ['config', '--global', '--path', '--get', 'core.excludesFile'], git).catch(
    () => undefined,
  );
  const value = named?.code === 0 ? named.stdout.toString('utf8').trim() : '';
  const env = git?.env ?? process.env;
  const home = env.HOME ?? os.homedir();
  const fallback = path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'git', 'ignore');
  const file = value || fallback;
  return fs.existsSync(file) ? file : undefined;
}

/**
 * A private git dir for reading `tree` (a worktree of the repository at `root`) against `base`: its index holds
 * `base`'s tree, so `add -A` then `diff --cached base` is the arm's work, and `status` lists what the tree changed.
 */
export async function privateGit(
  root: string,
  tree: string,
  base: string,
  git?: GitOptions,
  hidden: readonly string[] = [],
): Promise<PrivateGit> {
  const commonDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-common-dir'], git));
  const excludesFile = await globalExcludes(root, git);
  const scratch = makeScratch('privgit');
  const release = () => fs.rmSync(scratch, { recursive: true, force: true });
  try {
    // No template: no hook samples, no info/exclude of git's own; our config is the one `init` writes.
    await gitxOk(scratch, ['init', '-q', '--template=', '--', path.join(scratch, 'repo')], git);
    const gitDir = path.join(scratch, 'repo', '.git');
    fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true });
    fs.writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), `${path.join(commonDir, 'objects')}\n`);
    // The repository's own ignore rules (info/exclude), as the run found them: what the user keeps out stays out.
    fs.mkdirSync(path.join(gitDir, 'info'), { recursive: true });
    const userExclude = path.join(commonDir, 'info', 'exclude');
    if (fs.existsSync(userExclude)) fs.copyFileSync(userExclude, path.join(gitDir, 'info', 'exclude'));
    if (excludesFile)
      fs.appendFileSync(path.join(gitDir, 'info', 'exclude'), `\n${fs.readFileSync(excludesFile, 'utf8')}\n`);
    const env: NodeJS.ProcessEnv = {
      ...(git?.env ?? process.env),
      GIT_DIR: gitDir,
      GIT_WORK_TREE: tree,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
    };
    for (const name of [
      'GIT_INDEX_FILE',
      'GIT_COMMON_DIR',
      'GIT_OBJECT_DIRECTORY',
      'GIT_ALTERNATE_OBJECT_DIRECTORIES',
      'GIT_CONFIG',
      'GIT_CONFIG_PARAMETERS',
      'GIT_CONFIG_COUNT',
    ])
      delete env[name];
    const own: GitOptions = { ...git, env };
    // HEAD detached at the base (a status compares the index with it), the index read from it.
    const commit = await gitxText(tree, ['rev-parse', '--verify', '--quiet', `${base}^{commit}`], own);
    fs.writeFileSync(path.join(gitDir, 'HEAD'), `${commit}\n`);
    await gitxOk(tree, ['read-tree', commit], own);
    // Stat data for the index, so the status, add and diff that follow hash each file once, not each time (exit 1
    // only says some files differ).
    await gitx(tree, ['update-index', '-q', '--refresh'], own);
    // What the factory itself changed in the tree (its node settings) is not the tree's change, here as in its own index.
    if (hidden.length > 0) await gitxOk(tree, ['update-index', '--skip-worktree', '--', ...hidden], own);
    return { git: own, release };
  } catch (error) {
    release();
    throw error;
  }
}

/** Runs `work` with a private git on `tree`, removed afterwards whatever happens. */
export async function withPrivateGit<T>(
  root: string,
  tree: string,
  base: string,
  git: GitOptions | undefined,
  work: (git: GitOptions) => Promise<T>,
  hidden: readonly string[] = [],
): Promise<T> {
  const own = await privateGit(root, tree, base, git, hidden);
  try {
    return await work(own.git);
  } finally {
    own.release();
  }
}
