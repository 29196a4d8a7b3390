// An arm's tree with a git of its own. A linked worktree (`git worktree add`) shares the user's refs, config,
// hooks and info with every other worktree: an arm that plants a hook, a filter or a remote there reaches the
// user's git and the other arms' (its `git commit` runs another arm's hook). Here each arm's tree is a repository
// of its own — `git init` in the tree, the user's objects borrowed read-only through `objects/info/alternates`,
// HEAD detached at the base commit, the index and files read from it — so its refs, config, hooks, info and
// index are its own, and what it commits is written into its own object store. What the user's repository adds
// to this git's view is carried over once: its ignore rules (info/exclude), a shallow clone's boundary, and the
// commit identity its config sets (user.name, user.email), so that an arm's `git commit` works as it would there.
import fs from 'node:fs';
import path from 'node:path';
import { firstLine } from '../../contract/errors.js';
import type { GitOptions } from '../../process/git.js';
import { gitMotif, gitx, gitxText } from '../git/command.js';
import {
  claimRunFolder,
  oneAtATime,
  releaseRunFolder,
  runFolder,
  worktreeRefusal,
  WorktreeError,
  type AddWorktreeOptions,
  type Worktree,
} from './worktrees.js';

/** What the user's config sets that an arm's commit needs (read once from the user's repository). */
const IDENTITY = ['user.name', 'user.email'];

async function copyIdentity(root: string, dir: string, git?: GitOptions): Promise<void> {
  for (const key of IDENTITY) {
    const value = await gitx(root, ['config', '--get', key], git);
    const text = value.code === 0 ? value.stdout.toString('utf8').trim() : '';
    if (text) await gitx(dir, ['config', key, text], git);
  }
}

/**
 * A repository of its own at `dir` (absent or empty) with `commit` checked out, borrowing the objects of the
 * repository at `root`. Throws a WorktreeError in one line, leaving nothing, when it cannot be made.
 */
export async function makeOwnRepo(
  root: string,
  dir: string,
  commit: string,
  git?: GitOptions,
  label = path.basename(dir),
): Promise<void> {
  try {
    await initOwnRepo(root, dir, commit, git, label);
  } catch (error) {
    // Seen under a heavy load, arms made at once: a git dir that git no longer took for one at its checkout (cause
    // not found yet). Made afresh once; a second failure is the tree's refusal, with what the git dir held.
    if (!(error instanceof WorktreeError) || !/not a git repository/.test(error.message)) throw error;
    await initOwnRepo(root, dir, commit, git, label);
  }
}

async function initOwnRepo(
  root: string,
  dir: string,
  commit: string,
  git: GitOptions | undefined,
  label: string,
): Promise<void> {
  const commonDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-common-dir'], git));
  const fail = (what: string, result?: Awaited<ReturnType<typeof gitx>>): never => {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new WorktreeError(firstLine(`no tree for ${label}: ${what}${result ? `: ${gitMotif(result)}` : ''}`));
  };
  // No template: no hook samples, nothing of git's own in info/; the config is the one `init` writes.
  const made = await gitx(path.dirname(dir), ['init', '-q', '--template=', '--', dir], git);
  if (made.code !== 0) fail('git init failed', made);
  const gitDir = path.join(dir, '.git');
  fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true });
  fs.writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), `${path.join(commonDir, 'objects')}\n`);
  fs.mkdirSync(path.join(gitDir, 'info'), { recursive: true });
  for (const name of ['info/exclude', 'shallow']) {
    const from = path.join(commonDir, name);
    if (fs.existsSync(from)) fs.copyFileSync(from, path.join(gitDir, name));
  }
  await copyIdentity(root, dir, git);
  const resolved = await gitx(dir, ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], git);
  if (resolved.code !== 0) fail(`the commit ${commit} is not in the repository`, resolved);
  fs.writeFileSync(path.join(gitDir, 'HEAD'), `${resolved.stdout.toString('utf8').trim()}\n`);
  const checkedOut = await gitx(dir, ['read-tree', '--reset', '-u', 'HEAD'], git);
  if (checkedOut.code !== 0)
    fail(`its files could not be checked out (its git dir held ${heldIn(gitDir)})`, checkedOut);
}

/** What a git dir holds, for a motif: its entries and what HEAD says. */
function heldIn(gitDir: string): string {
  try {
    const head = fs.existsSync(path.join(gitDir, 'HEAD'))
      ? fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim().slice(0, 12)
      : 'none';
    return `${fs.readdirSync(gitDir).sort().join(' ')}; HEAD ${head}`;
  } catch {
    return 'nothing: it is gone';
  }
}

/** An arm's tree in the run's folder: a repository of its own (removed first if it is there) at `opts.commit`. */
export async function addArmRepo(root: string, opts: AddWorktreeOptions): Promise<Worktree> {
  const refused = await worktreeRefusal(root, opts.git);
  if (refused) throw new WorktreeError(`no tree for ${opts.name}: ${refused}`);
  const dir = path.join(runFolder(root, opts.run, opts.env), opts.name);
  // The run's folder is claimed and the tree's folder made in one step, one tree at a time: another tree's release
  // (which removes the run's folder once it holds nothing but its owner file) must never find it empty meanwhile.
  const runDir = await oneAtATime(root, async () => {
    const claimed = claimRunFolder(root, opts.run, opts.env);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir);
    return claimed;
  });
  try {
    await makeOwnRepo(root, dir, opts.commit, opts.git, opts.name);
  } catch (error) {
    await oneAtATime(root, async () => releaseRunFolder(runDir));
    throw error;
  }
  const real = fs.realpathSync(dir);
  let removed = false;
  return {
    dir: real,
    commit: opts.commit,
    async remove() {
      if (removed) return;
      removed = true;
      await oneAtATime(root, async () => {
        fs.rmSync(real, { recursive: true, force: true });
        releaseRunFolder(runDir);
      });
    },
  };
}
