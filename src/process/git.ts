// Git, read-only, for the workflows: is this a work tree, what state is it in, which files changed. Every
// call is run to its end by the process helper (own process group, run tag, kill ladder) with an argument
// vector, never a shell, and an environment that keeps git from prompting or taking optional locks.
import fs from 'node:fs';
import { runToEnd } from './run.js';
import { FactoryError } from '../contract/errors.js';

export class GitError extends FactoryError {
  override readonly name = 'GitError';
  constructor(message: string) {
    super(message, 'infrastructure');
  }
}

export interface GitOptions {
  /** Written into git's environment as FACTORY_RUN_TAG. */
  runTag?: string;
  /** A git that hangs (a lock, a network filesystem) is ended after this long. */
  timeoutMs?: number;
  /** Base environment (e.g. the allowlisted child env); defaults to the cockpit's. */
  env?: NodeJS.ProcessEnv;
}

export interface TreeState {
  /** The commit checked out; null in a repository without any commit yet. */
  head: string | null;
  /** The branch checked out; null when HEAD is detached. */
  branch: string | null;
  /** Tracked paths with staged or unstaged changes (renames name the new path), as porcelain reports them. */
  dirty: string[];
  /** Untracked, not ignored paths (every file, not collapsed folders). */
  untracked: string[];
}

export interface GitRawOptions extends GitOptions {
  /** Variables set on top of the base environment (e.g. GIT_INDEX_FILE for a temporary index). */
  extraEnv?: NodeJS.ProcessEnv;
}

export interface GitRawOutput {
  code: number | null;
  /** Bytes: a binary patch must reach its file unchanged. */
  stdout: Buffer;
  stderr: string;
}

function isFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The factory's own git never runs a program the repository names. An agent's bash can write `.git/hooks/*` or
 * `.git/config`; the factory's checkout, reset, add and commit would then run them with the user's whole
 * environment. So every git call disables hooks and each configuration that starts a program: the fsmonitor, the
 * pager, the editor, credential/ssh/askpass helpers, external diff, commit signing.
 */
export const SAFE_GIT_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.editor=true',
  'sequence.editor=true',
  'core.askPass=',
  'core.sshCommand=false',
  'credential.helper=',
  'diff.external=',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
].flatMap((setting) => ['-c', setting]);

function gitEnv(opts: GitRawOptions): NodeJS.ProcessEnv {
  // No prompt (a hung credential helper), no optional lock (a status must not fight the user's own git), and no
  // program named by the environment either (the same list as SAFE_GIT_CONFIG, for what env can override).
  const env: NodeJS.ProcessEnv = {
    ...(opts.env ?? process.env),
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    ...opts.extraEnv,
  };
  for (const name of ['GIT_EXTERNAL_DIFF', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_SSH', 'GIT_SSH_COMMAND'])
    delete env[name];
  return env;
}

/**
 * The one git runner: resolves with the exit code and the output whatever the code; throws GitError when git
 * cannot run or hangs (its group is then ended by the kill ladder).
 */
export async function gitRaw(cwd: string, args: string[], opts: GitRawOptions = {}): Promise<GitRawOutput> {
  // A missing cwd would make spawn fail with ENOENT, which reads as "git is not installed".
  if (!isFolder(cwd)) throw new GitError(`not a folder: ${cwd}`);
  const out = await runToEnd('git', [...SAFE_GIT_CONFIG, ...args], {
    cwd,
    env: gitEnv(opts),
    runTag: opts.runTag,
    timeoutMs: opts.timeoutMs ?? 30_000,
    killGraceMs: 500,
    maxOutputBytes: Infinity, // a binary patch is as long as it is
  });
  if (out.spawnError) throw new GitError(`git could not start in ${cwd}: ${out.spawnError.message}`);
  if (out.timedOut) throw new GitError(`git ${args[0]} timed out in ${cwd}`);
  return { code: out.code, stdout: out.stdout, stderr: out.stderr.toString('utf8') };
}

async function git(
  cwd: string,
  args: string[],
  opts: GitOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const raw = await gitRaw(cwd, args, opts);
  return { ...raw, stdout: raw.stdout.toString('utf8') };
}

/** Output of a git command that must succeed; its stderr's first line is the motif otherwise. */
async function gitOk(cwd: string, args: string[], opts?: GitOptions): Promise<string> {
  const result = await git(cwd, args, opts);
  if (result.code !== 0) {
    const first =
      result.stderr
        .split('\n')
        .find((l) => l.trim() !== '')
        ?.trim() ?? `exit ${result.code}`;
    throw new GitError(`git ${args[0]} failed in ${cwd}: ${first}`);
  }
  return result.stdout;
}

/** NUL-separated fields (the `-z` forms keep paths verbatim: no quoting, no escaping). */
function fields(text: string): string[] {
  return text.split('\0').filter((f) => f !== '');
}

/** The work tree's root: every path these helpers return is relative to it, whatever subfolder asked. */
export async function topLevel(cwd: string, opts?: GitOptions): Promise<string> {
  return (await gitOk(cwd, ['rev-parse', '--show-toplevel'], opts)).replace(/\n$/, '');
}

/** Whether `cwd` is inside a git work tree (false for a missing folder, a bare repo, or no repo). */
export async function isWorkTree(cwd: string, opts?: GitOptions): Promise<boolean> {
  try {
    const result = await git(cwd, ['rev-parse', '--is-inside-work-tree'], opts);
    return result.code === 0 && result.stdout.trim() === 'true';
  } catch (error) {
    if (error instanceof GitError) return false;
    throw error;
  }
}

/** Parses `git status --porcelain=v2 --branch -z --untracked-files=all`. Pure, exported for tests. */
export function parseStatusV2(raw: string): TreeState {
  const state: TreeState = { head: null, branch: null, dirty: [], untracked: [] };
  const parts = raw.split('\0');
  for (let i = 0; i < parts.length; i += 1) {
    const entry = parts[i]!;
    if (entry === '') continue;
    if (entry.startsWith('# branch.oid ')) {
      const oid = entry.slice('# branch.oid '.length);
      state.head = oid === '(initial)' ? null : oid;
    } else if (entry.startsWith('# branch.head ')) {
      const head = entry.slice('# branch.head '.length);
      state.branch = head === '(detached)' ? null : head;
    } else if (entry.startsWith('1 ')) {
      // 1 XY sub mH mI mW hH hI <path>: eight fields before the path, which may hold spaces.
      state.dirty.push(entry.split(' ').slice(8).join(' '));
    } else if (entry.startsWith('2 ')) {
      // 2 XY sub mH mI mW hH hI Xscore <path>, then the original path in the next NUL field.
      state.dirty.push(entry.split(' ').slice(9).join(' '));
      i += 1;
    } else if (entry.startsWith('u ')) {
      // u XY sub m1 m2 m3 mW h1 h2 h3 <path>
      state.dirty.push(entry.split(' ').slice(10).join(' '));
    } else if (entry.startsWith('? ')) {
      state.untracked.push(entry.slice(2));
    }
  }
  return state;
}

/** The tree's state: HEAD, branch, changed tracked paths, untracked paths (relative to the work tree's root). Throws GitError outside a repo. */
export async function treeState(cwd: string, opts?: GitOptions): Promise<TreeState> {
  const raw = await gitOk(
    await topLevel(cwd, opts),
    ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all'],
    opts,
  );
  return parseStatusV2(raw);
}

/**
 * Repo-relative paths that differ from `since` (a commit; default HEAD): committed since then, staged,
 * unstaged, deleted, plus untracked files. Sorted, without duplicates. Renames count as a deletion and an
 * addition, so both paths appear (a patch touches both).
 */
export async function changedFiles(cwd: string, since?: string, opts?: GitOptions): Promise<string[]> {
  if (since !== undefined && (since.startsWith('-') || since.trim() === ''))
    throw new GitError(`not a commit: ${JSON.stringify(since)}`);
  const root = await topLevel(cwd, opts);
  const base = since ?? 'HEAD';
  const hasBase = (await git(root, ['rev-parse', '--verify', '--quiet', `${base}^{commit}`], opts)).code === 0;
  if (!hasBase && since !== undefined) throw new GitError(`git: ${since} is not a commit in ${cwd}`);
  // Without any commit yet, everything in the index is new.
  const tracked = hasBase
    ? await gitOk(root, ['diff', '--name-only', '--no-renames', '-z', base, '--'], opts)
    : await gitOk(root, ['ls-files', '-z'], opts);
  const untracked = await gitOk(root, ['ls-files', '--others', '--exclude-standard', '-z'], opts);
  return [...new Set([...fields(tracked), ...fields(untracked)])].sort();
}
