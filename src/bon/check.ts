// The `check` phase of best-of-N (zero tokens): every arm starts from the same clean HEAD and its patch is
// everything it left in the tree, so a tree with the user's own changes is refused — they would end up in every
// arm's patch and be wiped by the reset between arms. Untracked files under `specs/` are tolerated: that is
// where a spec is written before it is committed, and neither harvest nor reset touches them.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, PhaseFailure } from '../contract/errors.js';
import { isWorkTree, topLevel, treeState, type GitOptions } from '../process/git.js';
import { checkSpecFile } from '../config/specFile.js';
import { DATA_DIR, SPECS_DIR } from './patch/patch.js';

export const MIN_ARMS = 2;
export const MAX_ARMS = 5;

/** Why an arms count is refused, or undefined when it is a whole number from 2 to 5. Pure. */
export function armsProblem(arms: unknown): string | undefined {
  const n = typeof arms === 'string' && arms.trim() !== '' ? Number(arms) : arms;
  if (typeof n !== 'number' || !Number.isInteger(n))
    return `--arms must be a whole number from ${MIN_ARMS} to ${MAX_ARMS} (got ${typeof arms === 'string' ? JSON.stringify(arms) : String(arms)})`;
  if (n < MIN_ARMS) return `--arms ${n} is too few: best-of-N compares at least ${MIN_ARMS} arms`;
  if (n > MAX_ARMS) return `--arms ${n} is too many: at most ${MAX_ARMS} arms (each one is a full implementation)`;
  return undefined;
}

/** The arms count, or a UsageError (exit 2, one line) before anything runs. Pure. */
export function validateArms(arms: unknown): number {
  const problem = armsProblem(arms);
  if (problem) throw new UsageError(problem);
  return Number(arms);
}

export interface CheckBonOptions {
  /** The folder bon runs in (inside the work tree). */
  cwd: string;
  /** The spec, relative to `cwd` or absolute. */
  specPath: string;
  arms: number;
  /** `adws/adw_data` of the workspace. */
  dataDir: string;
  adwId: string;
  git?: GitOptions;
}

export interface BonCheck {
  /** The spec as the agent is told it: relative to `cwd` when inside it, absolute otherwise. */
  spec: string;
  specBytes: number;
  /** The commit every arm starts from (and is reset to). */
  head: string;
  /** The work tree's root. */
  root: string;
  /** `adws/adw_data/bon/<adw_id>/`, created. */
  bonDir: string;
}

const LISTED = 3;

/** Whether a repo-relative path lies under `specs/` at the root. */
function underSpecs(rel: string): boolean {
  return rel.startsWith(`${SPECS_DIR}/`);
}

function dirtyMotif(dirty: string[], untracked: string[]): string {
  const named = [...dirty.map((p) => `${p} (changed)`), ...untracked.map((p) => `${p} (untracked)`)];
  const more = named.length > LISTED ? ` and ${named.length - LISTED} more` : '';
  return (
    `the work tree is not clean: ${named.slice(0, LISTED).join(', ')}${more} — ` +
    `commit or stash them first (only untracked files under ${SPECS_DIR}/ and the factory's ${DATA_DIR}/ are tolerated)`
  );
}

export async function checkBon(opts: CheckBonOptions): Promise<BonCheck> {
  const problem = armsProblem(opts.arms);
  if (problem) throw new PhaseFailure(problem, undefined, 'check');
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(opts.adwId))
    throw new PhaseFailure(`not an adw id: ${JSON.stringify(opts.adwId)}`, undefined, 'check');

  const { abs, bytes } = checkSpecFile(opts.cwd, opts.specPath);

  if (!(await isWorkTree(opts.cwd, opts.git))) {
    throw new PhaseFailure(
      `${opts.cwd} is not a git work tree: best-of-N harvests each arm as a git patch`,
      undefined,
      'check',
    );
  }
  const root = await topLevel(opts.cwd, opts.git);
  const tree = await treeState(root, opts.git);
  if (!tree.head)
    throw new PhaseFailure(
      `${root} has no commit yet: best-of-N needs a HEAD every arm starts from`,
      undefined,
      'check',
    );
  // The factory's own runtime data (ledger, traces, caches) is not the user's change, ignored or not.
  const untracked = tree.untracked.filter((p) => !underSpecs(p) && !p.startsWith(`${DATA_DIR}/`) && p !== DATA_DIR);
  if (tree.dirty.length > 0 || untracked.length > 0)
    throw new PhaseFailure(dirtyMotif(tree.dirty, untracked), undefined, 'check');

  const bonDir = path.join(opts.dataDir, 'bon', opts.adwId);
  fs.mkdirSync(bonDir, { recursive: true });
  const rel = path.relative(opts.cwd, abs);
  const spec = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
  return { spec, specBytes: bytes, head: tree.head, root, bonDir };
}
