// An arm's work as a patch: harvested from the work tree, kept as a ref, and the tree put back to HEAD for the
// next arm. The reset is the dangerous half: it must remove what the arm created and NOTHING the user owns,
// so `git clean` never gets `-x` (ignored files — `.env`, `node_modules`, `adws/adw_data` — are the user's).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GitError, topLevel, type GitOptions } from '../../process/git.js';
import { gitx, gitxOk, gitxText, gitMotif } from '../git/command.js';
import { makeScratch } from '../../process/scratch.js';

/** Folders an arm's patch never carries and the reset never touches (anchored at the work tree's root). */
export const SPECS_DIR = 'specs';
/** The factory's own runtime data: normally git-ignored, excluded here too so a repo that forgot to ignore it does not lose its ledger and patches at the first reset. */
export const DATA_DIR = 'adws/adw_data';

/** The seal of a patch: the sha256 of its bytes, hex. */
export function patchDigest(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The patch's bytes, or why they are refused (unreadable, or not the sealed ones). */
export function readSealed(
  patchFile: string,
  sha256?: string,
  label = patchFile,
): { bytes: Buffer } | { motif: string } {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(patchFile);
  } catch {
    return { motif: `patch refused: ${label} cannot be read` };
  }
  if (sha256 !== undefined) {
    const found = patchDigest(bytes);
    if (found !== sha256)
      return {
        motif: `patch refused: ${label} changed since it was harvested (sealed sha256 ${sha256.slice(0, 12)}…, now ${found.slice(0, 12)}…)`,
      };
  }
  return { bytes };
}

/** `bon/<adw_id>/arm-<k>.patch`. */
export function armPatchFile(bonDir: string, arm: number): string {
  return path.join(bonDir, `arm-${arm}.patch`);
}

export interface HarvestOptions {
  /** The commit the arm started from (check's HEAD): an arm that committed its work is still harvested whole. */
  base?: string;
  git?: GitOptions;
  /** Tracked paths the factory itself changed in this tree (an arm worktree's node settings): never in the patch. */
  exclude?: readonly string[];
  /**
   * The repository `cwd` is a worktree of (an arm's tree): the tree is then read through a git dir of the factory's
   * own (../git/private.ts), which reads no config, hook or attribute driver the arm could have planted, and `base` is
   * required.
   */
  privateFrom?: string;
}

export interface Harvest {
  patchFile: string;
  bytes: number;
  /** The seal: sha256 of the bytes written, hex. Every way to apply refuses a file that no longer hashes so. */
  sha256: string;
  /** Repo-relative paths the patch touches (a rename names both). */
  files: string[];
  /** Lines the patch adds and removes (binary hunks count none). */
  added: number;
  removed: number;
}

/** The lines a patch adds and removes: only hunk lines count, never a file's `--- a/` / `+++ b/` headers. */
export function lineCounts(patch: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) inHunk = false;
    else if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) added += 1;
    else if (inHunk && line.startsWith('-')) removed += 1;
  }
  return { added, removed };
}

/**
 * Diff flags that make the patch appliable whatever the user's config says: no colour, no external diff or
 * textconv (one-way, unappliable), the standard a/ b/ prefixes (diff.noprefix / mnemonicPrefix would break
 * `git apply`), paths from the root (diff.relative), binary hunks in full.
 */
const PATCH_FLAGS = [
  '--binary',
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '--no-relative',
];

/**
 * The exclude pathspecs of `git add`. An excluded folder that is itself ignored is left out: git 2.39 refuses
 * to `add` a pathspec naming an ignored path (exit 1, "paths are ignored"), and `-A` skips it anyway.
 */
async function excludes(root: string, opts?: GitOptions): Promise<string[]> {
  const out: string[] = [];
  for (const dir of [SPECS_DIR, DATA_DIR]) {
    const ignored = await gitx(root, ['check-ignore', '-q', '--', dir], opts);
    if (ignored.code !== 0) out.push(`:(exclude,top)${dir}`);
  }
  return out;
}

/**
 * Stages everything the arm changed (except `specs/` and the factory's data), writes the staged diff against
 * HEAD (or `base`) to `patchFile`, then unstages. The index is unstaged even when the diff fails.
 */
export async function harvestPatch(cwd: string, patchFile: string, opts: HarvestOptions = {}): Promise<Harvest> {
  const base = opts.base ?? 'HEAD';
  if (opts.privateFrom !== undefined) {
    const tree = path.resolve(cwd);
    const { withPrivateGit } = await import('../git/private.js');
    // The private index is thrown away with its git dir: nothing to unstage in the arm's own.
    return withPrivateGit(opts.privateFrom, tree, base, opts.git, (git) =>
      stageAndDiff(tree, patchFile, base, opts.exclude, git),
    );
  }
  const root = await topLevel(cwd, opts.git);
  try {
    return await stageAndDiff(root, patchFile, base, opts.exclude, opts.git);
  } finally {
    await gitxOk(root, ['reset', '-q'], opts.git);
  }
}

async function stageAndDiff(
  root: string,
  patchFile: string,
  base: string,
  exclude: readonly string[] | undefined,
  git: GitOptions | undefined,
): Promise<Harvest> {
  const own = (exclude ?? []).map((p) => `:(exclude,top)${p}`);
  await gitxOk(root, ['add', '-A', '--', '.', ...(await excludes(root, git)), ...own], git);
  const patch = await gitxOk(root, ['diff', '--cached', ...PATCH_FLAGS, base, '--'], git);
  const names = await gitxOk(
    root,
    ['diff', '--cached', '--name-only', '--no-renames', '-z', '--no-relative', base, '--'],
    git,
  );
  fs.mkdirSync(path.dirname(patchFile), { recursive: true });
  fs.writeFileSync(patchFile, patch);
  const files = names
    .toString('utf8')
    .split('\0')
    .filter((f) => f !== '');
  return { patchFile, bytes: patch.length, sha256: patchDigest(patch), files, ...lineCounts(patch.toString('utf8')) };
}

export interface ResetOptions {
  /** Put HEAD back here first (an arm that committed moved it); the branch is moved back if it differs. */
  base?: string;
  git?: GitOptions;
}

/**
 * Puts the work tree back to HEAD (or `base`) for the next arm: unstage, restore tracked files, remove
 * untracked files and folders — except `specs/`, the factory's data and every ignored file (no `-x`).
 */
export async function resetTree(cwd: string, opts: ResetOptions = {}): Promise<void> {
  const root = await topLevel(cwd, opts.git);
  await gitxOk(root, opts.base ? ['reset', '-q', opts.base, '--'] : ['reset', '-q'], opts.git);
  const checkout = await gitx(root, ['checkout', '--', '.'], opts.git);
  // A HEAD with no tracked file at all has nothing to restore; git calls that an unmatched pathspec.
  if (checkout.code !== 0 && !/did not match any file/.test(checkout.stderr)) {
    throw new GitError(`git checkout failed in ${root}: ${gitMotif(checkout)}`);
  }
  await gitxOk(root, ['clean', '-q', '-f', '-d', '-e', `/${SPECS_DIR}`, '-e', `/${DATA_DIR}`], opts.git);
}

export interface ArmRef {
  ref: string;
  commit: string;
}

/** The ref that keeps arm `arm` of run `adwId`. */
export function armRefName(adwId: string, arm: number): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(adwId)) throw new GitError(`not an adw id: ${JSON.stringify(adwId)}`);
  if (!Number.isInteger(arm) || arm < 1) throw new GitError(`not an arm number: ${arm}`);
  return `refs/factory/${adwId}/arm-${arm}`;
}

// Factory-made commits carry the factory's name, so a repo without user.name still gets its refs.
const IDENTITY = {
  GIT_AUTHOR_NAME: 'factory',
  GIT_AUTHOR_EMAIL: 'factory@localhost',
  GIT_COMMITTER_NAME: 'factory',
  GIT_COMMITTER_EMAIL: 'factory@localhost',
};

/**
 * Keeps an arm's patch as a commit on `refs/factory/<adw_id>/arm-<k>` (parent HEAD or `base`, tree = parent +
 * patch). The tree is built in a temporary index (GIT_INDEX_FILE): the work tree and the real index are
 * never touched, so this can run while the next arm works.
 */
export async function keepArmRef(
  cwd: string,
  adwId: string,
  arm: number,
  patchFile: string,
  opts: HarvestOptions = {},
): Promise<ArmRef> {
  const ref = armRefName(adwId, arm);
  const root = await topLevel(cwd, opts.git);
  const parent = await gitxText(
    root,
    ['rev-parse', '--verify', '--quiet', `${opts.base ?? 'HEAD'}^{commit}`],
    opts.git,
  );
  const patchBytes = fs.statSync(patchFile).size;
  const scratch = makeScratch('armref');
  const withIndex = { ...opts.git, extraEnv: { GIT_INDEX_FILE: path.join(scratch, 'index') } };
  try {
    await gitxOk(root, ['read-tree', parent], withIndex);
    // An empty patch (the arm changed nothing) is kept too: the ref then points at HEAD's tree.
    if (patchBytes > 0) await gitxOk(root, ['apply', '--cached', '--', path.resolve(patchFile)], withIndex);
    const tree = await gitxText(root, ['write-tree'], withIndex);
    const message = `factory ${adwId} arm ${arm}`;
    const commit = await gitxText(root, ['commit-tree', '--no-gpg-sign', '-p', parent, '-m', message, tree], {
      ...opts.git,
      extraEnv: IDENTITY,
    });
    await gitxOk(root, ['update-ref', '-m', message, ref, commit], opts.git);
    return { ref, commit };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
