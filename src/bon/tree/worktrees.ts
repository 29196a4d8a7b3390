// Where the factory's own trees live (a best-of-N arm's, the primer's, the baseline's), the run folder that holds
// them and its owner, and the start-up sweep that removes what a killed run left behind. Each tree is a repository
// of its own (./repo.ts), made at a known commit outside the user's tree: the user keeps their tree meanwhile.
//
// Layout: <base>/<repo key>/<run>/<name>, with <base> = $FACTORY_WORKTREES or <tmp>/factory-worktrees, and an
// owner file per run (<run>/owner.json: the process that made them, and when it started). A run folder whose
// owner is gone is a leftover: the sweep removes it, and through git any linked worktree an earlier version of the
// factory made there (so `git worktree list` forgets it).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../contract/errors.js';
import type { GitOptions } from '../../process/git.js';
import { gitMotif, gitx, gitxText } from '../git/command.js';
import { processAlive } from '../../process/alive.js';
import { FactoryError } from '../../contract/errors.js';
import { worktreeBase } from '../../config/paths.js';

const OWNER_FILE = 'owner.json';
/** How long a run folder without an owner file is taken to be in the making. */
const FRESH_MS = 60_000;

/** A tree of the run that cannot be made or removed, in one line: the run stops before a token (exit 2). */
export class WorktreeError extends FactoryError {
  constructor(message: string) {
    super(message, 'infrastructure');
  }
}

// Where the trees of every run live: the workspace's paths say it (the git guard reads it too, below this room).
export { WORKTREES_ENV, worktreeBase } from '../../config/paths.js';

/** One folder per repository: its name (to be recognised by a person) and a digest of its real path. */
export function repoKey(root: string): string {
  const real = fs.realpathSync(root);
  const name =
    path
      .basename(real)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 40) || 'repo';
  return `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 10)}`;
}

interface Owner {
  pid: number;
  /** The owner's start time as the kernel counts it (/proc/<pid>/stat field 22), so a reused pid is not taken for it. */
  started?: string;
  root: string;
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(owner: Owner): boolean {
  if (!processAlive(owner.pid)) return false;
  // Where the kernel says when a process started, a different start time is another process under a reused pid.
  const now = startTimeOf(owner.pid);
  return owner.started === undefined || now === undefined || now === owner.started;
}

function readOwner(runDir: string): Owner | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(runDir, OWNER_FILE), 'utf8')) as Partial<Owner>;
    return typeof parsed.pid === 'number' && typeof parsed.root === 'string' ? (parsed as Owner) : undefined;
  } catch {
    return undefined;
  }
}

export interface Worktree {
  /** The worktree's folder (absolute, real). */
  readonly dir: string;
  readonly commit: string;
  /** Removes it through git (then the folder, whatever git said); harmless twice. */
  remove(): Promise<void>;
}

export interface AddWorktreeOptions {
  /** The run the worktree belongs to (its folder under the repo key). */
  run: string;
  /** The worktree's name inside the run (`arm_2`, `apply`…). */
  name: string;
  /** The commit to check out, detached. */
  commit: string;
  git?: GitOptions;
  env?: NodeJS.ProcessEnv;
}

/** Why worktrees cannot be made for the repository at `root`, or undefined when they can. */
export async function worktreeRefusal(root: string, git?: GitOptions): Promise<string | undefined> {
  const bare = await gitx(root, ['rev-parse', '--is-bare-repository'], git);
  if (bare.code !== 0) return `not a git repository: ${gitMotif(bare)}`;
  if (bare.stdout.toString('utf8').trim() === 'true') return 'a bare repository has no work tree to make worktrees of';
  return undefined;
}

async function removeDir(root: string, dir: string, git?: GitOptions): Promise<void> {
  // `--force` twice: a locked or dirty worktree is ours to remove all the same.
  const removed = await gitx(root, ['worktree', 'remove', '--force', '--force', dir], git).catch(() => undefined);
  if (removed?.code !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    await gitx(root, ['worktree', 'prune'], git).catch(() => undefined);
  }
}

/** The folder that holds a run's worktrees (the primer's and each arm's). */
export function runFolder(root: string, run: string, env?: NodeJS.ProcessEnv): string {
  return path.join(worktreeBase(env), repoKey(root), run);
}

/**
 * The trees of one repository are claimed and released one at a time in this process: a release removes the run's
 * folder once it holds nothing but its owner file, and must never do so while another tree is being made there.
 */
const queues = new Map<string, Promise<unknown>>();

export function oneAtATime<T>(root: string, work: () => Promise<T>): Promise<T> {
  const key = path.resolve(root);
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  const settled = next.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return next;
}

/** The run's folder, made if need be, with this process written in as its owner. */
export function claimRunFolder(root: string, run: string, env?: NodeJS.ProcessEnv): string {
  const runDir = runFolder(root, run, env);
  fs.mkdirSync(runDir, { recursive: true });
  const owner: Owner = { pid: process.pid, started: startTimeOf(process.pid), root: fs.realpathSync(root) };
  fs.writeFileSync(path.join(runDir, OWNER_FILE), `${JSON.stringify(owner)}\n`);
  return runDir;
}

/** The run's folder goes with its last tree, and the repository's with its last run. */
export function releaseRunFolder(runDir: string): void {
  if (fs.existsSync(runDir) && fs.readdirSync(runDir).every((entry) => entry === OWNER_FILE))
    fs.rmSync(runDir, { recursive: true, force: true });
  removeIfEmpty(path.dirname(runDir));
}

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir); // only an empty folder: another run's worktrees keep it
  } catch {
    // not empty, or gone
  }
}

/** The worktrees git knows for `root` (absolute paths as git lists them), the main one excluded. */
export async function listWorktrees(root: string, git?: GitOptions): Promise<string[]> {
  const text = await gitxText(root, ['worktree', 'list', '--porcelain', '-z'], git);
  const paths = text
    .split('\0')
    .filter((field) => field.startsWith('worktree '))
    .map((field) => field.slice('worktree '.length));
  return paths.slice(1);
}

/**
 * Removes the worktrees (and run folders) of this repository whose run is not alive: a killed run's, or one that
 * died before its cleanup. Returns the folders removed. Never touches a worktree outside the factory's base. The same
 * walk of the base removes the runs of repositories that no longer exist (a deleted clone, a test's temp repo),
 * their owner gone: no git knows them any more, so their folders go as they are. A live owner, or a repository
 * still there, keeps them (that repository's own next run sweeps them through its git).
 */
export async function sweepWorktrees(
  root: string,
  opts: { git?: GitOptions; env?: NodeJS.ProcessEnv } = {},
): Promise<string[]> {
  const base = worktreeBase(opts.env);
  const ours = repoKey(root);
  const removed: string[] = [];
  for (const repo of entriesOf(base)) {
    const repoDir = path.join(base, repo);
    if (repo === ours) removed.push(...(await sweepOurs(root, repoDir, opts)));
    else {
      for (const run of entriesOf(repoDir)) {
        const owner = readOwner(path.join(repoDir, run));
        if (owner && !ownerAlive(owner) && !fs.existsSync(owner.root))
          fs.rmSync(path.join(repoDir, run), { recursive: true, force: true });
      }
    }
    removeIfEmpty(repoDir);
  }
  return removed;
}

/** This repository's leftover runs: their worktrees removed through its git, then their folders. */
async function sweepOurs(
  root: string,
  repoDir: string,
  opts: { git?: GitOptions; env?: NodeJS.ProcessEnv },
): Promise<string[]> {
  const leftover = [...runFolders(root, opts.env).leftover.keys()];
  if (leftover.length === 0) return [];
  const realRepoDir = fs.realpathSync(repoDir);
  const removed: string[] = [];
  // A run killed while git was adding a worktree leaves a half-made admin folder, on which `git worktree list`
  // fails: prune it (git drops an admin folder without a valid gitdir) and list again.
  const known = await listWorktrees(root, opts.git).catch(async () => {
    await gitx(root, ['worktree', 'prune'], opts.git).catch(() => undefined);
    return listWorktrees(root, opts.git).catch(() => [] as string[]);
  });
  // The same walk `factory clean --dry-run` shows: a live run's folder (or one still in the making) stays.
  for (const run of leftover) {
    const runDir = path.join(realRepoDir, run);
    for (const tree of known.filter((p) => p.startsWith(`${runDir}${path.sep}`))) {
      try {
        await removeDir(root, tree, opts.git);
        removed.push(tree);
      } catch (error) {
        throw new WorktreeError(`could not remove the leftover worktree ${tree}: ${errorMessage(error)}`);
      }
    }
    // An arm's tree is a repository of its own (./repo.ts), which no `git worktree list` names: its folder goes.
    for (const entry of entriesOf(runDir)) {
      const tree = path.join(runDir, entry);
      if (!removed.includes(tree) && fs.existsSync(path.join(tree, '.git'))) removed.push(tree);
    }
    fs.rmSync(runDir, { recursive: true, force: true });
  }
  await gitx(root, ['worktree', 'prune'], opts.git).catch(() => undefined);
  return removed;
}

/**
 * The run folders of this repository that `sweepWorktrees` removes (their owner gone), and those it keeps because
 * their run is alive (or in the making), by run name: what `factory clean --dry-run` says before anything goes.
 */
export function runFolders(
  root: string,
  env?: NodeJS.ProcessEnv,
): { leftover: Map<string, string>; live: Map<string, string> } {
  const repoDir = path.join(worktreeBase(env), repoKey(root));
  const leftover = new Map<string, string>();
  const live = new Map<string, string>();
  for (const run of entriesOf(repoDir)) {
    const runDir = path.join(repoDir, run);
    const owner = readOwner(runDir);
    // A folder without an owner file yet may be one another run is making right now.
    const fresh = !owner && Date.now() - fs.statSync(runDir).mtimeMs < FRESH_MS;
    (fresh || (owner !== undefined && ownerAlive(owner)) ? live : leftover).set(run, runDir);
  }
  return { leftover, live };
}

/** A folder's entries, or none when it cannot be read (gone, or not a folder). */
function entriesOf(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
