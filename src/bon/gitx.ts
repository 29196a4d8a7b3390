// Git that writes, for best-of-N: the read-only helpers of ../git.ts do not cover harvesting a patch, resetting
// the tree, building a ref with a temporary index or a scratch worktree. Same discipline as ../git.ts: the
// supervised spawner (own process group, run tag, kill ladder on a hang), an argument vector and never a shell,
// no prompt, no optional lock. Output is kept as bytes: a binary patch must reach its file unchanged.
import fs from 'node:fs';
import { GitError, type GitOptions } from '../git.js';
import { spawnSupervised } from '../process/supervisor.js';

export interface GitxOptions extends GitOptions {
  /** Variables set on top of the base environment (e.g. GIT_INDEX_FILE for a temporary index). */
  extraEnv?: NodeJS.ProcessEnv;
}

export interface GitxOutput {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function gitEnv(opts: GitxOptions): NodeJS.ProcessEnv {
  return { ...(opts.env ?? process.env), GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', ...opts.extraEnv };
}

/** Runs git in `cwd`; resolves with its exit code and output whatever the code. Throws GitError when git cannot run or hangs. */
export async function gitx(cwd: string, args: string[], opts: GitxOptions = {}): Promise<GitxOutput> {
  let isDir = false;
  try {
    isDir = fs.statSync(cwd).isDirectory();
  } catch {
    // reported below
  }
  // A missing cwd makes spawn fail with ENOENT, which would read as "git is not installed".
  if (!isDir) throw new GitError(`not a folder: ${cwd}`);
  const child = spawnSupervised('git', args, { cwd, env: gitEnv(opts), runTag: opts.runTag });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let spawnError: Error | undefined;
  child.child.on('error', (error) => (spawnError = error));
  child.child.stdin.on('error', () => {});
  child.child.stdin.end();
  child.child.stdout.on('data', (d: Buffer) => out.push(d));
  child.child.stderr.on('data', (d: Buffer) => err.push(d));
  const closed = new Promise<void>((resolve) => child.child.once('close', () => resolve()));
  let killing: Promise<void> | undefined;
  const timer = setTimeout(() => (killing = child.kill(500)), opts.timeoutMs ?? 60_000);
  try {
    const exit = await child.exited;
    await Promise.race([closed, new Promise((r) => setTimeout(r, 500).unref())]);
    const timedOut = killing !== undefined;
    await killing;
    if (spawnError) throw new GitError(`git could not start in ${cwd}: ${spawnError.message}`);
    if (timedOut) throw new GitError(`git ${args[0]} timed out in ${cwd}`);
    return { code: exit.code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
  } finally {
    clearTimeout(timer);
  }
}

/** The first non-empty line of git's stderr (its motif), or the exit code. */
export function gitMotif(result: GitxOutput): string {
  return result.stderr.split('\n').find((l) => l.trim() !== '')?.trim() ?? `exit ${result.code}`;
}

/** Stdout of a git command that must succeed; GitError with stderr's first line otherwise. */
export async function gitxOk(cwd: string, args: string[], opts?: GitxOptions): Promise<Buffer> {
  const result = await gitx(cwd, args, opts);
  if (result.code !== 0) throw new GitError(`git ${args[0]} failed in ${cwd}: ${gitMotif(result)}`);
  return result.stdout;
}

/** Same, as text without its final newline (hashes, paths). */
export async function gitxText(cwd: string, args: string[], opts?: GitxOptions): Promise<string> {
  return (await gitxOk(cwd, args, opts)).toString('utf8').replace(/\n$/, '');
}
