// What an agent may not change under `.git`: the files that make git run programs or read other places
// (config, hooks, info/attributes, alternates…), the HEAD file, and every ref but the current branch's (an arm
// that committed its work is harvested whole and its branch reset). A snapshot is taken before the agents run;
// after each agent's turn, before any git of ours, a gate or a test runner reads the repository, the `.git` is
// compared with it, every difference is named, and undone: files written back byte for byte with their modes,
// files added removed, refs put back. The user's `.git` ends as it began.
import fs from 'node:fs';
import path from 'node:path';
import { gitx, gitxOk, gitxText, type GitxOptions } from './gitx.js';

/**
 * Files and folders (relative to the common git dir) whose every byte is guarded. Refs are not among them: they
 * are compared and put back through git (loose or packed is git's business), the current branch excepted.
 */
const GUARDED = ['config', 'config.worktree', 'hooks', 'info', 'objects/info/alternates', 'shallow', 'commondir'];
/** A guarded folder holding more than this many files is read no further (a hostile arm could fill one). */
const MAX_FILES = 2000;

interface FileState {
  bytes: Buffer;
  mode: number;
}

export interface GitDirSnapshot {
  /** The common git dir (absolute): where config, hooks and refs live, for every worktree. */
  commonDir: string;
  /** This worktree's own git dir (HEAD lives here). */
  gitDir: string;
  files: Map<string, FileState>;
  head: Buffer | undefined;
  /** refname → object id, the current branch excluded. */
  refs: Map<string, string>;
  /** The current branch (`refs/heads/…`), whose moves the tree reset undoes. */
  branch: string | undefined;
}

function readTree(base: string, rel: string, into: Map<string, FileState>): void {
  const abs = path.join(base, rel);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(abs);
  } catch {
    return;
  }
  if (stat.isDirectory()) {
    for (const name of fs.readdirSync(abs).sort()) {
      if (into.size >= MAX_FILES) return;
      readTree(base, path.join(rel, name), into);
    }
    return;
  }
  // A symlink is recorded as its target text: writing one in .git is a change like any other.
  const bytes = stat.isSymbolicLink() ? Buffer.from(`symlink:${fs.readlinkSync(abs)}`) : fs.readFileSync(abs);
  into.set(rel, { bytes, mode: stat.mode });
}

function readGuarded(commonDir: string): Map<string, FileState> {
  const files = new Map<string, FileState>();
  for (const rel of GUARDED) readTree(commonDir, rel, files);
  return files;
}

function readHead(gitDir: string): Buffer | undefined {
  try {
    return fs.readFileSync(path.join(gitDir, 'HEAD'));
  } catch {
    return undefined;
  }
}

async function readRefs(root: string, opts?: GitxOptions): Promise<{ refs: Map<string, string>; branch: string | undefined }> {
  const branch = await gitx(root, ['symbolic-ref', '-q', 'HEAD'], opts);
  const current = branch.code === 0 ? branch.stdout.toString('utf8').trim() : undefined;
  const listed = await gitxOk(root, ['for-each-ref', '--format=%(refname) %(objectname)'], opts);
  const refs = new Map<string, string>();
  for (const line of listed.toString('utf8').split('\n')) {
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    const name = line.slice(0, space);
    if (name !== current) refs.set(name, line.slice(space + 1));
  }
  return { refs, branch: current };
}

export async function snapshotGitDir(root: string, opts?: GitxOptions): Promise<GitDirSnapshot> {
  const commonDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-common-dir'], opts));
  const gitDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-dir'], opts));
  const { refs, branch } = await readRefs(root, opts);
  return { commonDir, gitDir, files: readGuarded(commonDir), head: readHead(gitDir), refs, branch };
}

function same(a: FileState | undefined, b: FileState | undefined): boolean {
  return a !== undefined && b !== undefined && a.mode === b.mode && a.bytes.equals(b.bytes);
}

function writeBack(file: string, state: FileState): void {
  fs.rmSync(file, { force: true, recursive: true });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = state.bytes.toString('utf8');
  if ((state.mode & fs.constants.S_IFMT) === fs.constants.S_IFLNK && text.startsWith('symlink:')) fs.symlinkSync(text.slice('symlink:'.length), file);
  else fs.writeFileSync(file, state.bytes, { mode: state.mode & 0o7777 });
  if ((state.mode & fs.constants.S_IFMT) !== fs.constants.S_IFLNK) fs.chmodSync(file, state.mode & 0o7777);
}

/**
 * Compares `.git` with the snapshot, undoes every difference, and names them (`hooks/pre-commit (added)`,
 * `config (changed)`, `refs/heads/x (added)`…); empty when `.git` was left alone.
 */
export async function restoreGitDir(root: string, snapshot: GitDirSnapshot, opts?: GitxOptions): Promise<string[]> {
  const changes: string[] = [];
  const now = readGuarded(snapshot.commonDir);
  for (const [rel, state] of snapshot.files) {
    if (same(state, now.get(rel))) continue;
    changes.push(`${rel} (${now.has(rel) ? 'changed' : 'removed'})`);
    writeBack(path.join(snapshot.commonDir, rel), state);
  }
  for (const rel of now.keys()) {
    if (snapshot.files.has(rel)) continue;
    changes.push(`${rel} (added)`);
    // The file only: a folder it sits in may hold the user's own files the guard does not read (objects/).
    fs.rmSync(path.join(snapshot.commonDir, rel), { force: true });
  }
  const head = readHead(snapshot.gitDir);
  if (snapshot.head && (!head || !head.equals(snapshot.head))) {
    changes.push('HEAD (changed)');
    fs.writeFileSync(path.join(snapshot.gitDir, 'HEAD'), snapshot.head);
  }
  // Refs last: the config and HEAD git reads them through are the user's again.
  const { refs } = await readRefs(root, opts);
  for (const [name, id] of snapshot.refs) {
    if (refs.get(name) === id) continue;
    changes.push(`${name} (${refs.has(name) ? 'moved' : 'deleted'})`);
    await gitxOk(root, ['update-ref', '--no-deref', name, id], opts);
  }
  for (const name of refs.keys()) {
    if (snapshot.refs.has(name) || name === snapshot.branch) continue;
    changes.push(`${name} (added)`);
    await gitxOk(root, ['update-ref', '--no-deref', '-d', name], opts);
  }
  return changes;
}

/** The one-line motif for an agent that changed `.git`. */
export function gitDirMotif(changes: string[]): string {
  const listed = changes.slice(0, 3).map((c) => `.git/${c}`).join(', ');
  const more = changes.length > 3 ? ` and ${changes.length - 3} more` : '';
  return `it changed the repository's .git (${listed}${more}): an agent may not; undone`;
}
