// What an arm did to its own git (../tree/repo.ts): nothing there reaches the user's repository or another arm's, and
// the factory's own git never reads it (./private.ts), but an arm that plants a hook, a filter driver, a remote
// or another object store in it has reached past its work, and says so. Read when its tree is made and again at its
// turn's end, and named as the guard names the user's acts (./acts.ts): `set core.hooksPath`, `added remote x`,
// `.git/hooks/pre-commit (added)`. Its refs, HEAD, index, logs and objects are its own bookkeeping (a commit of
// its work, a branch), never an act that makes it red; but a branch or tag of the user's that it made or moved there
// (`git branch -f main`, looking for the user's) was an attempt its own git contained, and is named as one (ownRefActs).
import fs from 'node:fs';
import path from 'node:path';
import { configActs, readConfig } from './acts.js';
import { readTree, sameFile, type FileState } from './files.js';
import type { GitxOptions } from './command.js';

/** The files of an arm's `.git` that make git run programs or read other places. */
const WATCHED = [
  'config',
  'config.worktree',
  'hooks',
  'info',
  'objects/info/alternates',
  'objects/info/http-alternates',
  'commondir',
  'shallow',
];

export interface OwnGitState {
  gitDir: string;
  files: Map<string, FileState>;
  config: string[];
}

export async function readOwnGit(tree: string, git?: GitxOptions): Promise<OwnGitState> {
  const gitDir = path.join(tree, '.git');
  const into = { files: new Map<string, FileState>(), dirs: new Set<string>() };
  for (const rel of WATCHED) readTree(gitDir, rel, into, () => false);
  // Read from `/`, not the tree: the arm's config names no program this read could run, whatever it says.
  return { gitDir, files: into.files, config: await readConfig('/', path.join(gitDir, 'config'), git) };
}

/** The acts between the state its tree was made with and now, named; empty when the arm left its git alone. */
export async function ownGitActs(tree: string, before: OwnGitState, git?: GitxOptions): Promise<string[]> {
  const now = await readOwnGit(tree, git);
  const acts: string[] = [];
  if (!sameFile(before.files.get('config'), now.files.get('config'))) {
    const named = configActs(before.config, now.config, now.files.get('config')?.bytes.toString('utf8') ?? '');
    acts.push(...(named.length > 0 ? named : [`.git/config (${now.files.has('config') ? 'changed' : 'removed'})`]));
  }
  for (const [rel, state] of before.files)
    if (rel !== 'config' && !sameFile(state, now.files.get(rel)))
      acts.push(`.git/${rel} (${now.files.has(rel) ? 'changed' : 'removed'})`);
  for (const rel of now.files.keys()) if (rel !== 'config' && !before.files.has(rel)) acts.push(`.git/${rel} (added)`);
  return acts;
}

/** The one-line motif for an arm that changed its own git. */
export function ownGitMotif(acts: readonly string[]): string {
  const shown = 6;
  const more = acts.length > shown ? ` and ${acts.length - shown} more` : '';
  return `it changed its git (${acts.slice(0, shown).join(', ')}${more}): an agent may not plant hooks, helpers or remotes`;
}

/** The refs a git dir holds (refname → object id), read from its files (loose refs over packed ones): no git runs. */
export function refsOf(gitDir: string): Map<string, string> {
  const refs = new Map<string, string>();
  try {
    for (const line of fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8').split('\n')) {
      const m = /^([0-9a-f]{40,64}) (refs\/\S+)$/.exec(line);
      if (m) refs.set(m[2]!, m[1]!);
    }
  } catch {
    // none packed
  }
  const into = { files: new Map<string, FileState>(), dirs: new Set<string>() };
  readTree(gitDir, 'refs', into, () => false);
  for (const [rel, state] of into.files) refs.set(rel.split(path.sep).join('/'), state.bytes.toString('utf8').trim());
  return refs;
}

/**
 * The user's branches and tags (`userRefs`, refnames) that an arm made or moved in its own git since `before`: the
 * user's own are untouched (its git is not theirs), but it tried. Named as tried acts, one per ref.
 */
export function ownRefActs(
  before: ReadonlyMap<string, string>,
  now: ReadonlyMap<string, string>,
  userRefs: ReadonlySet<string>,
): string[] {
  const acts: string[] = [];
  for (const [ref, id] of now) {
    if (!userRefs.has(ref) || before.get(ref) === id) continue;
    const kind = ref.startsWith('refs/tags/') ? 'tag' : 'branch';
    const name = ref.replace(/^refs\/(heads|tags)\//, '');
    acts.push(
      `${before.has(ref) ? 'moved' : 'made'} your ${kind} ${name} in its own git — contained (yours is untouched)`,
    );
  }
  return acts;
}
