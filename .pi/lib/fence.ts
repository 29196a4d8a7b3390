// The fence of a best-of-N arm: folders its tools may neither read nor write — the user's own tree and the other
// trees of the run (the primer's, the other arms') — given by the core in FACTORY_FENCED as a JSON array of absolute
// paths. The arm's own project (its worktree) is never fenced, even when it lies inside a fenced folder. A path is
// judged as written (lexically): a link inside the arm's tree (its node_modules to the user's packages) may be read;
// writing through one is the write guard's to refuse (it follows links).
import path from 'node:path';

export const FENCE_ENV = 'FACTORY_FENCED';

/** The fenced folders of this process, or [] (outside a best-of-N arm, or a value that is not a list of paths). */
export function fencedRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env[FENCE_ENV];
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed)
      ? parsed.filter((p): p is string => typeof p === 'string' && path.isAbsolute(p)).map((p) => path.resolve(p))
      : [];
  } catch {
    return [];
  }
}

function inside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function refusal(shown: string): string {
  return `${shown} is in another tree of this run (your repository's or another arm's): work only in your own worktree, with paths relative to it (intent fenced)`;
}

/** Why a tool may not touch `target` (as the model wrote it, relative to `cwd`), or undefined. */
export function fenceReason(target: string, cwd: string, roots: readonly string[]): string | undefined {
  if (roots.length === 0 || target === '') return undefined;
  const cleaned = target.startsWith('@') ? target.slice(1) : target;
  const expanded =
    cleaned === '~' || cleaned.startsWith('~/') ? path.join(process.env.HOME ?? '/', cleaned.slice(1)) : cleaned;
  const absolute = path.resolve(cwd, expanded);
  if (inside(absolute, path.resolve(cwd))) return undefined;
  return roots.some((root) => inside(absolute, root)) ? refusal(target) : undefined;
}

/** Why a bash command may not run: it names a fenced folder outside the arm's own tree. Read from its text. */
export function fencedInCommand(command: string, cwd: string, roots: readonly string[]): string | undefined {
  for (const root of roots) {
    for (let at = command.indexOf(root); at >= 0; at = command.indexOf(root, at + 1)) {
      // The path written there: from the root's first character to the next space, quote or shell operator.
      const end = command.slice(at).search(/[\s'"`;|&<>()$]/);
      const written = end < 0 ? command.slice(at) : command.slice(at, at + end);
      if (!inside(path.resolve(written), path.resolve(cwd))) return refusal(written);
    }
  }
  return undefined;
}
