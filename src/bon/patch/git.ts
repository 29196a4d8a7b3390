// Asking git itself what a patch does, so the verdict never rests on our reading of git's grammar alone. Two
// questions, two walls: before anything is applied, `git apply --numstat -z` names every path git will write
// and `git apply --summary` every mode it will set; after the patch is applied in the scratch worktree,
// `git diff --cached --raw` says what git actually put in the index. Our own header reader (./text.ts) stays
// in front of both as the first wall.
import { isSpecialMode } from './text.js';
import { gitx, gitMotif, type GitxOptions } from '../git/command.js';

export interface GitPatchFacts {
  /** Every path git will write (new names of renames and copies included), as git reads them. */
  paths: string[];
  /** The first `--summary` line that sets a symlink or submodule mode, if any. */
  specialMode?: string;
}

/** What git makes of the patch at `patchFile` (absolute), read in `root`; a motif when git cannot read it. */
export async function gitPatchFacts(
  root: string,
  patchFile: string,
  opts?: GitxOptions,
): Promise<GitPatchFacts | { motif: string }> {
  const numstat = await gitx(root, ['apply', '--numstat', '-z', '--', patchFile], opts);
  if (numstat.code !== 0) return { motif: `git cannot read the patch: ${gitMotif(numstat)}` };
  // Records are `added\tdeleted\tpath\0`; a rename or copy may also be `added\tdeleted\t\0old\0new\0`.
  const paths: string[] = [];
  const fields = numstat.stdout.toString('utf8').split('\0');
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i]!;
    if (field === '') continue;
    const parts = field.split('\t');
    if (parts.length < 3) {
      paths.push(field); // the second name of a -z rename record
      continue;
    }
    const name = parts.slice(2).join('\t');
    if (name !== '') paths.push(name);
  }
  const summary = await gitx(root, ['apply', '--summary', '--', patchFile], opts);
  if (summary.code !== 0) return { motif: `git cannot read the patch: ${gitMotif(summary)}` };
  const specialMode = summary.stdout
    .toString('utf8')
    .split('\n')
    .find((line) => {
      const mode = /^ (?:create|delete) mode (\S+) /.exec(line) ?? /^ mode change (\S+) => (\S+) /.exec(line);
      return mode !== null && mode.slice(1).some((m) => m !== undefined && isSpecialMode(m));
    });
  return { paths, specialMode: specialMode?.trim() };
}

/**
 * After `git apply --index` in a worktree: the first index entry the patch changed whose old or new mode is a
 * symlink or submodule, as git recorded it (`:old new sha sha status\0path\0`), or undefined.
 */
export async function appliedSpecialEntry(worktree: string, opts?: GitxOptions): Promise<string | undefined> {
  const raw = await gitx(
    worktree,
    ['diff', '--cached', '--raw', '-z', '--no-renames', '--no-ext-diff', 'HEAD', '--'],
    opts,
  );
  if (raw.code !== 0) return `git diff failed in the scratch worktree: ${gitMotif(raw)}`;
  const fields = raw.stdout.toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const meta = /^:(\d+) (\d+) /.exec(fields[i]!);
    if (meta && (isSpecialMode(meta[1]!) || isSpecialMode(meta[2]!)))
      return `${JSON.stringify(fields[i + 1])} would become mode ${meta[2]} (was ${meta[1]})`;
  }
  return undefined;
}
