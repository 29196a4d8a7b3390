// The files of a `.git` the guard keeps (./guard.ts), read and written back byte for byte with their modes. Paths
// are relative to the common git dir; a linked worktree's own admin files are `worktrees/<name>/…` under it.
import fs from 'node:fs';
import path from 'node:path';

export interface FileState {
  bytes: Buffer;
  mode: number;
}

/** A folder holding more than this many files is read no further (a hostile agent could fill one). */
const MAX_FILES = 20_000;

/** Reads `rel` under `base` (a file, or a folder's every file) into `files`, its folders into `dirs`; `skip` prunes. */
export function readTree(
  base: string,
  rel: string,
  into: { files: Map<string, FileState>; dirs: Set<string> },
  skip: (rel: string) => boolean,
): void {
  if (skip(rel)) return;
  const abs = path.join(base, rel);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(abs);
  } catch {
    return;
  }
  if (stat.isDirectory()) {
    into.dirs.add(rel);
    for (const name of fs.readdirSync(abs).sort()) {
      if (into.files.size >= MAX_FILES) return;
      readTree(base, path.join(rel, name), into, skip);
    }
    return;
  }
  // A symlink is recorded as its target text: writing one in .git is a change like any other.
  const bytes = stat.isSymbolicLink() ? Buffer.from(`symlink:${fs.readlinkSync(abs)}`) : fs.readFileSync(abs);
  into.files.set(rel, { bytes, mode: stat.mode });
}

export function sameFile(a: FileState | undefined, b: FileState | undefined): boolean {
  return a !== undefined && b !== undefined && a.mode === b.mode && a.bytes.equals(b.bytes);
}

/** Writes `state` at `file` as it was (a symlink as a symlink), whatever is there now. */
export function writeBack(file: string, state: FileState): void {
  fs.rmSync(file, { force: true, recursive: true });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = state.bytes.toString('utf8');
  if ((state.mode & fs.constants.S_IFMT) === fs.constants.S_IFLNK && text.startsWith('symlink:')) {
    fs.symlinkSync(text.slice('symlink:'.length), file);
    return;
  }
  fs.writeFileSync(file, state.bytes, { mode: state.mode & 0o7777 });
  fs.chmodSync(file, state.mode & 0o7777);
}

/** Removes the folders of `now` that `before` did not have and that are empty once the added files are gone, deepest first. */
export function removeAddedDirs(base: string, before: Set<string>, now: Set<string>): void {
  const added = [...now].filter((d) => !before.has(d)).sort((a, b) => b.length - a.length);
  for (const rel of added) {
    try {
      fs.rmdirSync(path.join(base, rel)); // only an empty folder
    } catch {
      // not empty (a file the guard does not read), or gone
    }
  }
}
