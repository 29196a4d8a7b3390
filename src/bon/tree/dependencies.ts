// The installed dependencies of the user's tree, provided to a scratch git worktree (the verified apply's, and
// later each parallel arm's) without giving it a way to write into the user's tree. A worktree holds tracked
// files only, so a gate such as `npm test` would find no node_modules there. Linking the user's node_modules
// folder whole lets every tool that writes under it — a test runner's cache in node_modules/.cache, vite's
// .vite, … — write into the user's real folder, with the scratch tree's absolute paths, which the next run in
// the real tree then trusts. So each node_modules folder becomes a real folder in the scratch tree whose
// entries are links to the user's packages; tool-written state is not linked, and lands in the scratch tree,
// to die with it.
import fs from 'node:fs';
import path from 'node:path';
import type { GitOptions } from '../../process/git.js';
import { gitx } from '../git/command.js';

export const NODE_MODULES = 'node_modules';

/**
 * The dot-entries of a node_modules folder that package managers write at install time and tools only read:
 * npm's `.bin` and `.package-lock.json`, pnpm's virtual store and state, yarn's install state, the stores of
 * bun's and deno's node_modules layouts. A package name never starts with a dot, so every other dot-entry is
 * state some tool writes while it runs (`.cache`, `.vite`, `.vitest`, `.prisma`'s generated client…).
 */
const INSTALL_METADATA = new Set([
  '.bin',
  '.package-lock.json',
  '.pnpm',
  '.modules.yaml',
  '.pnpm-workspace-state.json',
  '.pnpm-workspace-state-v1.json',
  '.yarn-state.yml',
  '.yarn-integrity',
  '.bun',
  '.deno',
]);

/** Whether an entry of the user's node_modules is shared with a scratch tree (a link) or left out of it. */
export function isSharedEntry(name: string): boolean {
  return !name.startsWith('.') || INSTALL_METADATA.has(name);
}

export interface ScratchDependencies {
  /** The node_modules folders made in the scratch tree (absolute), outermost first. */
  readonly folders: readonly string[];
  /** The links made in them (absolute), each to the user's entry of the same name. */
  readonly links: readonly string[];
  /**
   * Removes every link made (the link itself, never what it points to), then the folders made, with whatever
   * the gates wrote in them. Call it before the worktree is removed; calling it twice is harmless.
   */
  release(): void;
}

/** `rel` as a folder inside `root`, or undefined when it is absolute or climbs out. */
function inside(root: string, rel: string): string | undefined {
  if (path.isAbsolute(rel)) return undefined;
  const abs = path.resolve(root, rel);
  const back = path.relative(root, abs);
  if (back === '..' || back.startsWith(`..${path.sep}`) || path.isAbsolute(back)) return undefined;
  return abs;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function lexists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * For each folder (relative to both roots) whose node_modules exists in the user's tree, a node_modules in the
 * scratch tree: a real folder (made, or the one the checkout holds when the repo tracks some of it) in which each
 * shared entry of the user's is a link to it. An entry the scratch tree already has is left alone; a folder the
 * scratch tree lacks is skipped. On error, what was made is released before the error is thrown.
 */
export function provideDependencies(
  userRoot: string,
  scratchRoot: string,
  folders: readonly string[],
): ScratchDependencies {
  const made: string[] = [];
  const links: string[] = [];
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    // Links first, each checked to be a link at removal time (a gate may have replaced it meanwhile).
    for (const link of links.splice(0).reverse()) {
      try {
        if (fs.lstatSync(link).isSymbolicLink()) fs.unlinkSync(link);
      } catch {
        // already gone
      }
    }
    // What is left in a folder we made is the gates' own writing, real files of the scratch tree: rmSync
    // removes a symlink it meets as a link and never descends through it.
    for (const folder of made.splice(0).reverse()) fs.rmSync(folder, { recursive: true, force: true });
  };
  const depth = (rel: string): number => (rel === '.' ? 0 : rel.split(path.sep).length);
  const ordered = [...new Set(folders.map((f) => path.normalize(f === '' ? '.' : f)))].sort(
    (a, b) => depth(a) - depth(b) || a.localeCompare(b),
  );
  try {
    const realScratch = fs.realpathSync(scratchRoot);
    for (const rel of ordered) {
      const userFolder = inside(userRoot, rel);
      const scratchFolder = inside(scratchRoot, rel);
      if (!userFolder || !scratchFolder) continue;
      const source = path.join(userFolder, NODE_MODULES);
      const target = path.join(scratchFolder, NODE_MODULES);
      if (!isDirectory(source) || !isDirectory(scratchFolder)) continue;
      // Never through a link (one of ours, or the repo's): what is made must lie in the scratch tree itself.
      if (!inside(realScratch, path.relative(realScratch, fs.realpathSync(scratchFolder)))) continue;
      const targetStat = fs.lstatSync(target, { throwIfNoEntry: false });
      if (targetStat?.isSymbolicLink() || (targetStat && !targetStat.isDirectory())) continue; // tracked as such: the repo's choice
      if (!targetStat) {
        fs.mkdirSync(target);
        made.push(target);
      }
      for (const name of fs.readdirSync(source)) {
        if (!isSharedEntry(name)) continue;
        const link = path.join(target, name);
        if (lexists(link)) continue;
        fs.symlinkSync(path.join(source, name), link);
        links.push(link);
      }
    }
  } catch (error) {
    release();
    throw error;
  }
  return { folders: [...made], links: [...links], release };
}

/**
 * The folders (relative to `root`, `.` for the root) whose node_modules a gate run may need: every folder from
 * the root down to each gate folder (Node resolves a package by walking up), and every folder of the user's
 * tree holding an ignored node_modules (a runner at the root may run a nested package's tests, as workspaces
 * do). Git lists the ignored ones without descending into them.
 */
export async function dependencyFolders(
  root: string,
  gateFolders: readonly string[],
  git?: GitOptions,
): Promise<string[]> {
  const found = new Set<string>(['.']);
  for (const folder of gateFolders) {
    let rel = path.relative(root, path.resolve(root, folder));
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) continue;
    while (rel !== '' && rel !== '.') {
      found.add(rel);
      rel = path.dirname(rel);
    }
  }
  const listed = await gitx(
    root,
    ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--no-empty-directory'],
    git,
  );
  if (listed.code === 0) {
    for (const entry of listed.stdout.toString('utf8').split('\0')) {
      const rel = entry.replace(/\/$/, '');
      if (path.posix.basename(rel) !== NODE_MODULES) continue;
      found.add(path.dirname(rel.split('/').join(path.sep)));
    }
  }
  return [...found];
}
