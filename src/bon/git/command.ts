// Git that writes, for best-of-N: harvesting a patch, resetting the tree, building a ref with a temporary index
// or a scratch worktree. It runs through ../../process/git.ts's one runner (supervised spawner, no shell, no prompt, no
// optional lock, output as bytes).
import { GitError, gitRaw, type GitRawOptions, type GitRawOutput } from '../../process/git.js';

export type GitxOptions = GitRawOptions;
export type GitxOutput = GitRawOutput;

/** Runs git in `cwd` (the core's one git runner; a longer default deadline for patches and worktrees). */
export function gitx(cwd: string, args: string[], opts: GitxOptions = {}): Promise<GitxOutput> {
  return gitRaw(cwd, args, { timeoutMs: 60_000, ...opts });
}

/** The first non-empty line of git's stderr (its motif), or the exit code. */
export function gitMotif(result: GitxOutput): string {
  return (
    result.stderr
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? `exit ${result.code}`
  );
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
