// `.worktreeinclude`: the ignored files a worktree needs that git does not check out (an `.env`, a local config).
// One entry per line, relative to the repository root; `#` starts a comment. An entry without a glob character
// names a file or folder that must exist (a missing one is the user's mistake, said in one line); an entry with
// `*` or `?` is matched against the ignored entries git lists at the root and may match nothing. Each is copied —
// never linked — into the worktree at the same place, so nothing an arm writes there reaches the user's copy.
import fs from 'node:fs';
import path from 'node:path';
import type { GitOptions } from '../../process/git.js';
import { globToRegExp } from '../../../.pi/lib/path-guard.js';
import { gitx } from '../git/command.js';
import { WorktreeError } from './worktrees.js';

export const INCLUDE_FILE = '.worktreeinclude';

/** The entries of a `.worktreeinclude` text: trimmed, comments and blank lines dropped, `./` and trailing `/` removed. */
export function parseInclude(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '')
    .map((line) => line.replace(/^\.\//, '').replace(/\/+$/, ''));
}

function refusal(entry: string): string | undefined {
  if (path.posix.isAbsolute(entry) || path.win32.isAbsolute(entry)) return 'is absolute';
  const parts = entry.split('/');
  if (parts.includes('..')) return 'climbs out of the repository';
  if (parts[0] === '.git') return 'is inside .git';
  return undefined;
}

/** Ignored entries at the root as git lists them (folders collapsed, POSIX paths without the trailing slash). */
async function ignoredEntries(root: string, git?: GitOptions): Promise<string[]> {
  const listed = await gitx(
    root,
    ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--no-empty-directory'],
    git,
  );
  if (listed.code !== 0) return [];
  return listed.stdout
    .toString('utf8')
    .split('\0')
    .filter((e) => e !== '')
    .map((e) => e.replace(/\/$/, ''));
}

/**
 * Copies what the repository's `.worktreeinclude` names into `tree`. Returns the entries copied (repo-relative);
 * throws a one-line WorktreeError for an entry that is unsafe, missing, or a symbolic link. No file: nothing to do.
 */
export async function copyIncluded(root: string, tree: string, git?: GitOptions): Promise<string[]> {
  let text: string;
  try {
    text = fs.readFileSync(path.join(root, INCLUDE_FILE), 'utf8');
  } catch {
    return [];
  }
  const entries = parseInclude(text);
  const wanted = new Set<string>();
  let ignored: string[] | undefined;
  for (const entry of entries) {
    const unsafe = refusal(entry);
    if (unsafe) throw new WorktreeError(`${INCLUDE_FILE}: ${JSON.stringify(entry)} ${unsafe}: not copied`);
    if (/[*?]/.test(entry)) {
      ignored ??= await ignoredEntries(root, git);
      const pattern = globToRegExp(entry);
      for (const found of ignored) if (pattern.test(found)) wanted.add(found);
      continue;
    }
    if (!fs.existsSync(path.join(root, entry)))
      throw new WorktreeError(`${INCLUDE_FILE} names ${entry}, which does not exist in ${root}`);
    wanted.add(entry);
  }
  const copied: string[] = [];
  for (const entry of [...wanted].sort()) {
    const from = path.join(root, entry);
    const stat = fs.lstatSync(from);
    // A link copied as a link would point the arm back into the user's tree (or anywhere): refused.
    if (stat.isSymbolicLink()) throw new WorktreeError(`${INCLUDE_FILE}: ${entry} is a symbolic link: not copied`);
    const to = path.join(tree, entry);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    // Links inside a copied folder are left out too, so the copy holds no way back into the user's files.
    fs.cpSync(from, to, {
      recursive: true,
      force: true,
      errorOnExist: false,
      filter: (source) => !fs.lstatSync(source).isSymbolicLink(),
    });
    copied.push(entry);
  }
  return copied;
}
