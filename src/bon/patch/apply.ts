// Applying an arm's patch to the user's tree, verified. A patch is agent output: it is read as hostile until
// proven otherwise. Its bytes must be the ones sealed at harvest (sha256), and from then on only a private copy
// is used, so nothing can swap the file between the checks and the apply. Its paths are checked by our reading
// and by git's (no `..`, no absolute path, nothing in `.git/`, no write through a symlink, no symlink or
// submodule in any mode spelling), `git apply --check` must accept it, and the gates must be green on the
// current HEAD with the patch applied in a scratch worktree (which shares the user's installed packages but
// writes nothing into the user's tree: ../tree/dependencies.ts), where git's own index says what it did.
// Only then is it applied in the user's tree, around the user's own changes (see placeInTree).
//
// Two places a patch is checked against. At an arm's end (`base`), the run's base commit, in a temporary index:
// the user goes on working in the tree while arms run, and an edit of theirs says nothing of the arm's work. At
// apply time, the user's tree as it is now: that is where the patch lands, and an edit there must survive it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstLine } from '../../contract/errors.js';
import { topLevel, type GitOptions } from '../../process/git.js';
import { commandGate, motif as gatesMotif, type GateCommand, type GateReport } from '../../gates/judges.js';
import { gateSignature, sameFailure, type GateSignature } from '../../gates/baseline.js';
import { readSealed } from './patch.js';
import { appliedSpecialEntry, gitPatchFacts } from './git.js';
import { parsePatchHeaders, type PatchPath } from './text.js';
import { dependencyFolders, provideDependencies, type ScratchDependencies } from '../tree/dependencies.js';
import { gitx, gitxOk, gitxText, gitMotif } from '../git/command.js';
import { makeOwnRepo } from '../tree/repo.js';
import { sandboxEnv, type Sandbox } from '../../sandbox/policy.js';
import { makeScratch } from '../../process/scratch.js';

export type PatchVerdict = { ok: true; paths: string[] } | { ok: false; motif: string };

/** Why one patch path is refused (without the symlink check, which needs the tree), or undefined. Pure. */
export function pathRefusal(p: PatchPath): string | undefined {
  const shown = JSON.stringify(p.raw);
  if (p.raw === '' || p.path === '') return `an empty path in ${p.source}`;
  if (p.raw.includes('\0')) return `${shown} is not a path`;
  if (p.raw.startsWith('/') || p.path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p.path))
    return `${shown} is an absolute path`;
  const parts = p.path.split(/[\\/]/);
  if (parts.includes('..')) return `${shown} climbs out of the work tree (..)`;
  // git refuses `.git` in any case and at any depth (a nested `.git` is a repository of its own).
  if (parts.some((c) => c.toLowerCase() === '.git')) return `${shown} touches .git/`;
  return undefined;
}

/** The first existing prefix of `rel` under `root` that is a symlink, or undefined. */
function symlinkOnTheWay(root: string, rel: string): string | undefined {
  let at = root;
  for (const part of rel.split('/').filter((c) => c !== '' && c !== '.')) {
    at = path.join(at, part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch {
      return undefined; // the rest does not exist yet: the patch creates it under real folders
    }
    if (stat.isSymbolicLink()) return path.relative(root, at);
    if (!stat.isDirectory()) return undefined;
  }
  return undefined;
}

export interface VerifyOptions {
  git?: GitOptions;
  /** The seal recorded at harvest: bytes that hash otherwise are refused. */
  sha256?: string;
  /** How the patch is named in motifs (when `patchFile` is a private copy). */
  label?: string;
  /**
   * The commit to check the patch against (an arm's end: the run's base), in a temporary index read from it; the
   * user's tree and index are then neither read nor written. Without it, the user's tree as it is now.
   */
  base?: string;
}

/** The first prefix of `rel` that `base` records as a symlink or submodule (its tree, not the user's), or undefined. */
async function specialOnTheWayIn(
  root: string,
  base: string,
  rel: string,
  git?: GitOptions,
): Promise<string | undefined> {
  const parts = rel.split('/').filter((c) => c !== '' && c !== '.');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  if (prefixes.length === 0) return undefined;
  // Literal pathspecs: a patch path holding `*` or `:(` is a name, never a pattern.
  const listed = await gitxOk(root, ['ls-tree', '-z', base, '--', ...prefixes], {
    ...git,
    extraEnv: { GIT_LITERAL_PATHSPECS: '1' },
  });
  const special = new Set<string>();
  for (const entry of listed.toString('utf8').split('\0')) {
    const tab = entry.indexOf('\t');
    const mode = entry.slice(0, entry.indexOf(' '));
    if (tab > 0 && (mode === '120000' || mode === '160000')) special.add(entry.slice(tab + 1));
  }
  return prefixes.find((p) => special.has(p));
}

/** Why a path is refused in the tree at `root`, or in the commit `base` (ours then the symlink check), or undefined. */
async function refusalInTree(root: string, p: PatchPath, base?: string, git?: GitOptions): Promise<string | undefined> {
  const refused = pathRefusal(p);
  if (refused) return `patch refused: ${refused}`;
  const link = base === undefined ? symlinkOnTheWay(root, p.path) : await specialOnTheWayIn(root, base, p.path, git);
  if (link === undefined) return undefined;
  const how = link === p.path ? 'is a symlink in the tree' : `goes through the symlink ${link}`;
  return `patch refused: ${JSON.stringify(p.path)} ${how}`;
}

/**
 * Refuses a patch whose bytes are not the sealed ones or whose paths or modes are unsafe (one line naming the
 * first bad one, by our reading of the headers, then by git's), then asks git whether it applies: on `base` in a
 * temporary index (`git apply --check --cached`), else on the user's tree as it is (`git apply --check`: the
 * index is placeInTree's business). Never changes the tree or the index.
 */
export async function verifyPatch(cwd: string, patchFile: string, opts: VerifyOptions = {}): Promise<PatchVerdict> {
  const label = opts.label ?? patchFile;
  const sealed = readSealed(patchFile, opts.sha256, label);
  if ('motif' in sealed) return { ok: false, motif: sealed.motif };
  const text = sealed.bytes.toString('utf8');
  if (text.trim() === '') return { ok: false, motif: `patch refused: ${label} is empty (the arm changed nothing)` };
  const headers = parsePatchHeaders(text);
  if (headers.paths.length === 0)
    return { ok: false, motif: `patch refused: ${label} has no file header (not a patch)` };
  const root = await topLevel(cwd, opts.git);
  for (const p of headers.paths) {
    const refused = await refusalInTree(root, p, opts.base, opts.git);
    if (refused) return { ok: false, motif: refused };
  }
  if (headers.symlinkCreated)
    return {
      ok: false,
      motif: `patch refused: it makes ${JSON.stringify(headers.symlinkCreated)} a symlink or submodule (${firstLine(headers.specialMode ?? '', 80)})`,
    };
  const facts = await gitPatchFacts(root, path.resolve(patchFile), opts.git);
  if ('motif' in facts) return { ok: false, motif: firstLine(`patch refused: ${facts.motif}`) };
  for (const name of facts.paths) {
    const refused = await refusalInTree(
      root,
      { raw: name, path: name, source: 'git apply --numstat' },
      opts.base,
      opts.git,
    );
    if (refused) return { ok: false, motif: refused };
  }
  if (facts.specialMode)
    return {
      ok: false,
      motif: firstLine(`patch refused: git reads a symlink or submodule in it (${facts.specialMode})`),
    };
  const motif =
    opts.base === undefined
      ? await checkInTree(root, path.resolve(patchFile), opts.git)
      : await checkOnCommit(root, opts.base, path.resolve(patchFile), opts.git);
  if (motif) return { ok: false, motif };
  return { ok: true, paths: [...new Set(headers.paths.map((p) => p.path))] };
}

/** Why the patch does not apply to the user's tree as it is now (their own edits included), or undefined. */
async function checkInTree(root: string, patchFile: string, git?: GitOptions): Promise<string | undefined> {
  const check = await gitx(root, ['apply', '--check', '--', patchFile], git);
  // git's first line names the file and the line where the patch meets the user's own change.
  return check.code === 0 ? undefined : firstLine(`patch does not apply to your tree: ${gitMotif(check)}`);
}

/** Why the patch does not apply on `base`, asked in a temporary index read from it (no tree, no user index). */
async function checkOnCommit(
  root: string,
  base: string,
  patchFile: string,
  git?: GitOptions,
): Promise<string | undefined> {
  const scratch = makeScratch('check');
  const withIndex = { ...git, extraEnv: { GIT_INDEX_FILE: path.join(scratch, 'index') } };
  try {
    await gitxOk(root, ['read-tree', base], withIndex);
    const check = await gitx(root, ['apply', '--check', '--cached', '--', patchFile], withIndex);
    return check.code === 0 ? undefined : firstLine(`patch does not apply on ${base.slice(0, 8)}: ${gitMotif(check)}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

export interface ApplyOptions {
  cwd: string;
  patchFile: string;
  /** The seal recorded at harvest; every way to apply passes it. */
  sha256?: string;
  /** The payload's gate commands; a relative `cwd` is taken from `cwd`. Run in the scratch worktree. */
  gates: GateCommand[];
  /** The gates' environment; defaults to the cockpit's. */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  runTag?: string;
  git?: GitOptions;
  /**
   * The run's baseline: gates red on HEAD before its fan-out, with what they said. A gate red again the same way
   * with the patch is not held against it (as the harvest judged the arm), and the result names it.
   */
  excuse?: ReadonlyMap<string, GateSignature>;
  /** The OS sandbox the gates run in (the patch's code is an arm's); absent where the machine has none. */
  sandbox?: Sandbox;
}

export interface ApplyResult {
  applied: boolean;
  /** Why the patch was not applied (one line). */
  motif?: string;
  gates: GateReport[];
  /** Gates red with the patch exactly as on the run's HEAD: not held against it, not proof of it either. */
  excused?: string[];
  /** How it was applied, for the line the user reads (`git apply --index`, or the tree alone). */
  how?: string;
}

/**
 * The one line an apply ends with, whichever command applied it (the board's `p`, `--apply`, `factory apply`). The
 * patch is shown from where the user stands (a path under the run's data folder, not an absolute one a terminal
 * would cut before the verdict); an unverified arm says so, excused gates are named.
 */
export function applyLine(
  arm: number,
  patchFile: string,
  invokedIn: string,
  outcome: ApplyResult,
  unverified?: string,
): string {
  if (!outcome.applied) return `arm ${arm} not applied: ${outcome.motif ?? 'refused'}`;
  const shown = path.relative(invokedIn, patchFile) || patchFile;
  const note =
    unverified !== undefined
      ? ` — unverified: ${unverified}`
      : outcome.excused
        ? ` (${outcome.excused.join(', ')} red as on HEAD: not held against it)`
        : '';
  return `applied arm ${arm} (${shown}) with ${outcome.how ?? 'git apply --index'}${note} — review and commit it`;
}

/** The gate's folder inside the scratch worktree, or undefined when it lies outside the work tree. */
function mapIntoWorktree(root: string, worktree: string, cwd: string, gateCwd: string): string | undefined {
  let abs = path.resolve(cwd, gateCwd);
  try {
    abs = fs.realpathSync(abs); // git's top-level is a real path; compare like with like
  } catch {
    // a folder the patch creates: keep the path as given
  }
  const rel = path.relative(root, abs);
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return path.join(worktree, rel);
}

/**
 * Verifies the patch, runs the gates on HEAD + patch in a scratch worktree (removed in every case), and
 * applies it with `--index` in the real tree only when every gate is green and HEAD has not moved meanwhile.
 */
export async function applyVerified(opts: ApplyOptions): Promise<ApplyResult> {
  const sealed = readSealed(opts.patchFile, opts.sha256);
  if ('motif' in sealed) return { applied: false, motif: sealed.motif, gates: [] };
  // From here on, only a private copy of the sealed bytes (mode 0600, in a folder of our own) is read.
  const scratch = fs.realpathSync(makeScratch('apply'));
  const patch = path.join(scratch, 'sealed.patch');
  fs.writeFileSync(patch, sealed.bytes, { mode: 0o600 });
  try {
    return await applyCopy(opts, patch, scratch);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function applyCopy(opts: ApplyOptions, patch: string, scratch: string): Promise<ApplyResult> {
  const verdict = await verifyPatch(opts.cwd, patch, { git: opts.git, label: opts.patchFile });
  if (!verdict.ok) return { applied: false, motif: verdict.motif, gates: [] };
  const root = await topLevel(opts.cwd, opts.git);
  const head = await gitxText(root, ['rev-parse', '--verify', 'HEAD^{commit}'], opts.git);
  const worktree = path.join(scratch, 'tree');
  const temp = path.join(scratch, 'tmp');
  fs.mkdirSync(temp);
  let dependencies: ScratchDependencies | undefined;
  const reports: GateReport[] = [];
  const excused: GateReport[] = [];
  let added = false;
  try {
    // A repository of its own (../tree/repo.ts): nothing the patch's code does to its git reaches the user's.
    await makeOwnRepo(root, worktree, head, opts.git, 'the apply check');
    added = true;
    const inScratch = await gitx(worktree, ['apply', '--index', '--', patch], opts.git);
    if (inScratch.code !== 0)
      return { applied: false, motif: firstLine(`patch does not apply on HEAD: ${gitMotif(inScratch)}`), gates: [] };
    // The last word is git's own index: no gate runs on, and no user tree receives, a symlink or submodule.
    const special = await appliedSpecialEntry(worktree, opts.git);
    if (special) return { applied: false, motif: firstLine(`patch refused: ${special}`), gates: [] };
    const mapped = opts.gates.map((g) => ({ gate: g, cwd: mapIntoWorktree(root, worktree, opts.cwd, g.cwd) }));
    // The gates need the user's installed packages, and must write nothing into the user's tree: each
    // node_modules is a scratch folder of links to the user's packages, its caches the scratch tree's own.
    const gateFolders = mapped.flatMap((m) => (m.cwd ? [path.relative(worktree, m.cwd)] : []));
    dependencies = provideDependencies(root, worktree, await dependencyFolders(root, gateFolders, opts.git));
    for (const { gate, cwd } of mapped) {
      if (opts.signal?.aborted) break;
      if (cwd === undefined) {
        reports.push({
          gate: gate.run,
          ok: false,
          motif: `\`${gate.run}\` not run: its folder ${gate.cwd} is outside the work tree`,
          seconds: 0,
        });
        continue;
      }
      // Every gate runs even after a red one (as in build): the report shows each verdict.
      // In the OS sandbox where the machine has one: the patch's code writes the scratch tree and nothing else.
      const sandbox = opts.sandbox
        ? { sandbox: opts.sandbox, policy: { writable: [worktree, temp], readOnly: [], cwd } }
        : undefined;
      const env = sandbox ? sandboxEnv(opts.env ?? process.env, temp) : opts.env;
      const report = await commandGate(
        { ...gate, cwd },
        { signal: opts.signal, env, runTag: opts.runTag, ...(sandbox ? { sandbox } : {}) },
      )();
      const head = opts.excuse?.get(report.gate);
      // A gate that could not run is never excused: it verified nothing, here or on HEAD.
      if (
        !report.ok &&
        report.outcome !== 'setup' &&
        head !== undefined &&
        sameFailure(head, gateSignature(report, cwd))
      )
        excused.push(report);
      reports.push(report);
    }
  } finally {
    dependencies?.release(); // the links themselves, never what they point to, before the worktree goes
    if (added) fs.rmSync(worktree, { recursive: true, force: true });
  }
  if (opts.signal?.aborted)
    return { applied: false, motif: 'interrupted by the user: the patch was not applied', gates: reports };
  const held = reports.filter((r) => !excused.includes(r));
  const excusedNames = excused.length > 0 ? { excused: excused.map((r) => r.gate) } : {};
  const setup = held.find((r) => r.outcome === 'setup');
  if (setup)
    return {
      applied: false,
      motif: firstLine(`a gate cannot run on this machine: ${setup.motif ?? setup.gate}`),
      gates: reports,
      ...excusedNames,
    };
  const red = gatesMotif(held);
  if (red)
    return {
      applied: false,
      motif: firstLine(`gates red on HEAD with the patch, not applied: ${red}`),
      gates: reports,
      ...excusedNames,
    };
  const now = await gitxText(root, ['rev-parse', '--verify', 'HEAD^{commit}'], opts.git);
  if (now !== head)
    return {
      applied: false,
      motif: `HEAD moved while the gates ran (${head.slice(0, 8)} → ${now.slice(0, 8)}): not applied`,
      gates: reports,
    };
  const placed = await placeInTree(root, patch, opts.git);
  if ('motif' in placed) return { applied: false, motif: placed.motif, gates: reports };
  return { applied: true, gates: reports, how: placed.how, ...excusedNames };
}

/**
 * The patch into the user's tree, around their own changes: `git apply --index` when their index and tree agree
 * on the patch's files; otherwise (an edit not staged) the tree alone, then the index alone if it takes the
 * patch, so the user's unstaged edit stays theirs and unstaged. Each `git apply` writes all or nothing, and the
 * tree is checked before anything is written: a patch that meets the user's edit leaves the tree as it was.
 */
async function placeInTree(
  root: string,
  patch: string,
  git?: GitOptions,
): Promise<{ how: string } | { motif: string }> {
  const both = await gitx(root, ['apply', '--check', '--index', '--', patch], git);
  if (both.code === 0) {
    const applied = await gitx(root, ['apply', '--index', '--', patch], git);
    return applied.code === 0
      ? { how: 'git apply --index' }
      : { motif: firstLine(`git apply --index failed: ${gitMotif(applied)}`) };
  }
  const refused = await checkInTree(root, patch, git);
  if (refused) return { motif: refused };
  const cached = await gitx(root, ['apply', '--check', '--cached', '--', patch], git);
  const tree = await gitx(root, ['apply', '--', patch], git);
  if (tree.code !== 0) return { motif: firstLine(`git apply failed: ${gitMotif(tree)}`) };
  if (cached.code !== 0) return { how: 'git apply to your tree alone (your index differs there: not staged)' };
  const staged = await gitx(root, ['apply', '--cached', '--', patch], git);
  return staged.code === 0
    ? { how: 'git apply, staged with git apply --cached (your own unstaged changes stay unstaged)' }
    : { how: 'git apply to your tree alone (not staged)' };
}
