// What an agent may not change in the user's repository: every ref (the current branch, HEAD, packed-refs, tags,
// the reflogs), the index, the shared config (`git config` in a worktree writes it: remotes, core.hooksPath…) and
// the files that make git run programs or read other places (hooks, info/attributes, alternates…). A snapshot is
// taken before the agents run; after each agent's turn, before any git of ours, a gate or a test runner reads the
// repository, the `.git` is compared with it, each act is named ("moved refs/heads/main", "added remote x", "set
// core.hooksPath") and undone byte for byte. The user's `.git` ends as the run found it.
//
// Where the agent works decides what is its work: in worktrees (`agentsIn: 'worktrees'`) nothing of the user's
// repository is; in the user's tree (in place, and the builder) a commit on the current branch is its work, not an
// act — the branch, its reflog and HEAD's are put back all the same (the commit's changes stay in the tree and the
// index, where the harvest finds them) — and what it staged stays until the tree reset, after which `putBack`
// restores the index and what the reset wrote, byte for byte. The factory's own refs (refs/factory/) and its arms'
// admin folders (.git/worktrees/<arm>) are never read; the submodules' git dirs (.git/modules/) and the config of
// the user's other linked worktrees are kept like the rest.
import fs from 'node:fs';
import path from 'node:path';
import { configActs, readConfig, refActs } from './acts.js';
import { readTree, removeAddedDirs, sameFile, writeBack, type FileState } from './files.js';
import { gitx, gitxOk, gitxText, type GitxOptions } from './command.js';
import { worktreeBase } from '../../config/paths.js';

/** Kept byte for byte in the common git dir: ref storage, config, hooks and what makes git read other places. */
const COMMON = [
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'index',
  'packed-refs',
  'refs',
  'logs',
  'config',
  'config.worktree',
  'hooks',
  'info',
  'objects/info/alternates',
  'shallow',
  'commondir',
];
/** Kept in the user's own admin dir when the user works in a linked worktree. */
const OWN = ['HEAD', 'ORIG_HEAD', 'FETCH_HEAD', 'index', 'refs', 'logs', 'config.worktree'];
/** Kept in each submodule's git dir (`.git/modules/<name>/`, nested ones too): what makes git run programs there. */
const MODULE = [
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'index',
  'packed-refs',
  'refs',
  'logs',
  'config',
  'config.worktree',
  'hooks',
  'info',
  'objects/info/alternates',
  'shallow',
];
/**
 * Kept in the admin dir of each other linked worktree of the user's (not the factory's arms): its own config (which
 * can name programs) and the files that say where it is. Not its HEAD nor its index: the user may go on working
 * there while the arms run (switch branches, stage), and putting those back would undo the user, not an arm.
 */
const OTHER = ['config.worktree', 'gitdir', 'commondir', 'locked'];
/** The factory's namespace: its refs and their logs come and go with its runs. */
const FACTORY = ['refs/factory', 'logs/refs/factory'];
const REF_STORAGE = /^(packed-refs$|refs\/|logs\/|worktrees\/[^/]+\/(refs|logs)\/)/;

export type AgentsIn = 'tree' | 'worktrees';

export interface GitDirSnapshot {
  /** The common git dir (absolute): where config, hooks and refs live, for every worktree. */
  commonDir: string;
  /** The user's worktree's own git dir (its HEAD and index live here). */
  gitDir: string;
  /** The admin dirs of the user's other linked worktrees (their config guarded too). */
  others: string[];
  agentsIn: AgentsIn;
  files: Map<string, FileState>;
  dirs: Set<string>;
  /** refname → object id, the factory's refs excluded. */
  refs: Map<string, string>;
  /** The current branch (`refs/heads/…`), if HEAD names one. */
  branch: string | undefined;
  /** `git config --list` of the shared config. */
  config: string[];
  /** What the index holds (`ls-files --stage`): a refresh of its stat data is no act. */
  staged: Buffer;
}

interface Layout {
  commonDir: string;
  gitDir: string;
  /** The admin dirs (`worktrees/<id>`) of the user's other linked worktrees, as the snapshot found them. */
  others: string[];
}

type Into = { files: Map<string, FileState>; dirs: Set<string> };

/** Each git dir under `modules/` (a submodule's name may hold slashes; a submodule has its own `modules/`). */
function readModules(base: string, rel: string, into: Into): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(base, rel), { withFileTypes: true });
  } catch {
    return;
  }
  into.dirs.add(rel);
  if (entries.some((e) => e.name === 'HEAD' && !e.isDirectory())) {
    for (const name of MODULE) readTree(base, path.join(rel, name), into, () => false);
    readModules(base, path.join(rel, 'modules'), into);
    return;
  }
  for (const entry of entries) if (entry.isDirectory()) readModules(base, path.join(rel, entry.name), into);
}

/** The admin dir's files, relative to the common dir. */
function readGitDir(layout: Layout): Into {
  const into: Into = { files: new Map<string, FileState>(), dirs: new Set<string>() };
  const skip = (rel: string) => FACTORY.includes(rel) || rel === 'worktrees';
  for (const rel of COMMON) readTree(layout.commonDir, rel, into, skip);
  readModules(layout.commonDir, 'modules', into);
  const own = path.relative(layout.commonDir, layout.gitDir);
  if (own !== '')
    for (const rel of OWN)
      readTree(layout.commonDir, path.join(own, rel), into, (r) => FACTORY.includes(path.relative(own, r)));
  for (const other of layout.others)
    for (const rel of OTHER) readTree(layout.commonDir, path.join(other, rel), into, () => false);
  return into;
}

/**
 * The user's other linked worktrees: every admin dir under `worktrees/` but the user's own and the factory's arms
 * (theirs point into the factory's worktree root: an earlier run's, kept for resume, or this one's).
 */
function otherWorktrees(commonDir: string, gitDir: string, env: NodeJS.ProcessEnv): string[] {
  const own = path.relative(commonDir, gitDir);
  const factoryRoot = worktreeBase(env);
  const out: string[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(commonDir, 'worktrees')).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const rel = path.join('worktrees', name);
    if (rel === own) continue;
    let points = '';
    try {
      points = path.resolve(fs.readFileSync(path.join(commonDir, rel, 'gitdir'), 'utf8').trim());
    } catch {
      // no gitdir file: not a worktree git would use; its files are still the user's
    }
    if (points !== '' && !path.relative(factoryRoot, points).startsWith('..')) continue;
    out.push(rel);
  }
  return out;
}

/** What a commit on the current branch writes when the agent works in the user's tree: no act (its work). */
function workFiles(layout: Layout, branch: string | undefined): Set<string> {
  const own = path.relative(layout.commonDir, layout.gitDir);
  const work = new Set(['index', 'ORIG_HEAD', 'logs/HEAD'].map((f) => path.join(own, f)));
  if (branch) {
    work.add(branch);
    work.add(`logs/${branch}`);
  }
  return work;
}

async function readRefs(
  root: string,
  opts?: GitxOptions,
): Promise<{ refs: Map<string, string>; branch: string | undefined }> {
  const branch = await gitx(root, ['symbolic-ref', '-q', 'HEAD'], opts);
  const current = branch.code === 0 ? branch.stdout.toString('utf8').trim() : undefined;
  const listed = await gitxOk(root, ['for-each-ref', '--format=%(refname) %(objectname)'], opts);
  const refs = new Map<string, string>();
  for (const line of listed.toString('utf8').split('\n')) {
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    const name = line.slice(0, space);
    if (!name.startsWith('refs/factory/')) refs.set(name, line.slice(space + 1));
  }
  return { refs, branch: current };
}

function staged(root: string, opts?: GitxOptions): Promise<Buffer> {
  return gitxOk(root, ['ls-files', '--stage', '-z'], opts);
}

export async function snapshotGitDir(
  root: string,
  opts: GitxOptions & { agentsIn?: AgentsIn } = {},
): Promise<GitDirSnapshot> {
  const { agentsIn = 'tree', ...git } = opts;
  const commonDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-common-dir'], git));
  const gitDir = path.resolve(root, await gitxText(root, ['rev-parse', '--git-dir'], git));
  const { refs, branch } = await readRefs(root, git);
  const others = otherWorktrees(commonDir, gitDir, git.env ?? process.env);
  const { files, dirs } = readGitDir({ commonDir, gitDir, others });
  return {
    commonDir,
    gitDir,
    others,
    agentsIn,
    files,
    dirs,
    refs,
    branch,
    config: await readConfig(root, path.join(commonDir, 'config'), git),
    staged: await staged(root, git),
  };
}

/** `.git/<rel> (added|changed|removed)` for each file that differs; `skip` leaves some out. */
function fileChanges(
  before: Map<string, FileState>,
  now: Map<string, FileState>,
  skip: (rel: string) => boolean,
): string[] {
  const changes: string[] = [];
  for (const [rel, state] of before)
    if (!skip(rel) && !sameFile(state, now.get(rel)))
      changes.push(`.git/${rel} (${now.has(rel) ? 'changed' : 'removed'})`);
  for (const rel of now.keys()) if (!skip(rel) && !before.has(rel)) changes.push(`.git/${rel} (added)`);
  return changes;
}

/** Puts the files back as the snapshot has them (those `keep` names left as they are). */
function writeAllBack(
  snapshot: GitDirSnapshot,
  now: { files: Map<string, FileState>; dirs: Set<string> },
  keep: (rel: string) => boolean,
): void {
  for (const [rel, state] of snapshot.files)
    if (!keep(rel) && !sameFile(state, now.files.get(rel))) writeBack(path.join(snapshot.commonDir, rel), state);
  // The file only: a folder it sits in may hold the user's own files the guard does not read (objects/).
  for (const rel of now.files.keys())
    if (!keep(rel) && !snapshot.files.has(rel)) fs.rmSync(path.join(snapshot.commonDir, rel), { force: true });
  removeAddedDirs(snapshot.commonDir, snapshot.dirs, now.dirs);
}

/**
 * Compares `.git` with the snapshot, undoes every difference, and names each act (`moved refs/heads/main`, `added
 * remote x`, `set core.hooksPath`, `.git/hooks/pre-commit (added)`…); empty when `.git` was left alone.
 */
export async function restoreGitDir(root: string, snapshot: GitDirSnapshot, opts?: GitxOptions): Promise<string[]> {
  const now = readGitDir(snapshot);
  const work = snapshot.agentsIn === 'tree' ? workFiles(snapshot, snapshot.branch) : new Set<string>();
  const isWork = (rel: string) => work.has(rel);
  const indexRel = path.join(path.relative(snapshot.commonDir, snapshot.gitDir), 'index');
  // Every byte as it was (refs are files, loose or packed): nothing to name, and no git to run.
  if (fileChanges(snapshot.files, now.files, () => false).length === 0) return [];
  const acts: string[] = [];
  // The config, named by what it says (a remote, a setting), then written back.
  const configRel = 'config';
  if (!sameFile(snapshot.files.get(configRel), now.files.get(configRel))) {
    const named = configActs(
      snapshot.config,
      await readConfig(root, path.join(snapshot.commonDir, configRel), opts),
      now.files.get(configRel)?.bytes.toString('utf8') ?? '',
    );
    acts.push(
      ...(named.length > 0 ? named : [`.git/${configRel} (${now.files.has(configRel) ? 'changed' : 'removed'})`]),
    );
  }
  // The refs, named by what git reads (loose or packed is git's business); their storage written back byte for byte.
  const { refs } = await readRefs(root, opts);
  const named = refActs(snapshot.refs, refs, snapshot.agentsIn === 'tree' ? snapshot.branch : undefined);
  acts.push(...named);
  const quiet = (rel: string) =>
    rel === configRel || isWork(rel) || (named.length > 0 && REF_STORAGE.test(rel)) || rel === indexRel;
  acts.push(...fileChanges(snapshot.files, now.files, quiet));
  // The index: what it holds, not its stat data (a `git status` refreshes that).
  if (!isWork(indexRel) && !sameFile(snapshot.files.get(indexRel), now.files.get(indexRel))) {
    const held = await staged(root, opts).catch(() => Buffer.alloc(0));
    if (!held.equals(snapshot.staged)) acts.push('changed the index');
  }
  // In the user's tree, the agent's staging is its work until the tree reset (putBack then restores the index).
  writeAllBack(snapshot, now, (rel) => isWork(rel) && rel === indexRel);
  return acts;
}

/**
 * After the reset that undid an agent's work in the user's tree: the branch, its reflog, HEAD's, ORIG_HEAD and the
 * index as the snapshot has them, byte for byte (the reset itself writes reflog entries and ORIG_HEAD).
 */
export function putBack(snapshot: GitDirSnapshot): void {
  const now = readGitDir(snapshot);
  const work = workFiles(snapshot, snapshot.branch);
  // Only what the agent's work and the reset write: anything else was named and undone at the turn's end.
  writeAllBack(
    snapshot,
    { files: new Map([...now.files].filter(([rel]) => work.has(rel))), dirs: new Set() },
    (rel) => !work.has(rel),
  );
}

/** The one-line motif for an agent that changed `.git`. */
export function gitDirMotif(changes: string[]): string {
  const shown = 6;
  const listed = changes.slice(0, shown).join(', ');
  const more = changes.length > shown ? ` and ${changes.length - shown} more` : '';
  return `it changed the repository's .git (${listed}${more}): an agent may not; undone`;
}
