// Where a workspace keeps the factory's runtime data. One function, so no module invents its own layout.
import os from 'node:os';
import path from 'node:path';
import { discoverTopLevel } from '../process/workTree.js';

export interface WorkspacePaths {
  /** The folder the workflow runs in (a git top-level when there is one). */
  root: string;
  /** `adws/adw_data`: git-ignored runtime data. */
  dataDir: string;
  sessionsDir: string;
  ledgerFile: string;
  schemasDir: string;
  harnessTracesDir: string;
}

export function workspacePaths(root: string): WorkspacePaths {
  const dataDir = path.join(root, 'adws', 'adw_data');
  const sessionsDir = path.join(dataDir, 'sessions');
  return {
    root,
    dataDir,
    sessionsDir,
    ledgerFile: path.join(sessionsDir, 'ledger.jsonl'),
    schemasDir: path.join(dataDir, 'schemas'),
    harnessTracesDir: path.join(dataDir, 'traces', 'harness'),
  };
}

let prefetched: { dir: string; root: Promise<string> } | undefined;

/**
 * Starts the top-level probe now, before the modules of the command are loaded: when git has to be asked (see
 * workTree.ts), it runs on the other core while Node compiles them. The next `resolveWorkspaceRoot` of the same
 * folder takes this answer once; any other call probes afresh.
 */
export function prefetchWorkspaceRoot(dir: string): void {
  const abs = path.resolve(dir);
  const root = probeRoot(abs);
  root.catch(() => undefined); // never an unhandled rejection when nothing takes it (a usage error came first)
  prefetched = { dir: abs, root };
}

/** The git top-level of `dir`, or `dir` itself outside a work tree (read from the file system, else from git). */
export async function resolveWorkspaceRoot(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  if (prefetched?.dir === abs) {
    const { root } = prefetched;
    prefetched = undefined;
    return root;
  }
  return probeRoot(abs);
}

async function probeRoot(abs: string): Promise<string> {
  // A plain repository (or none) answers from the file system exactly as git would, without a process.
  const found = discoverTopLevel(abs);
  if (found !== undefined) return found ?? abs;
  // Anything else is git's to say, through the supervised spawner.
  const { GitError, topLevel } = await import('../process/git.js');
  try {
    return (await topLevel(abs, { timeoutMs: 10_000 })) || abs;
  } catch (error) {
    if (error instanceof GitError) return abs;
    throw error;
  }
}

/** A best-of-N run's harvest (ranking, winner, judge), `bon/<adw_id>/harvest.json` under the data folder. */
export function harvestFile(bonDir: string): string {
  return path.join(bonDir, 'harvest.json');
}

/** `from` → `to` as a POSIX relative path that pi reads as a local path (always `./` or `../`). */
export function packageSource(fromDir: string, toDir: string): string {
  const relative = path.relative(path.resolve(fromDir), path.resolve(toDir));
  if (path.isAbsolute(relative)) return relative.split(path.sep).join('/'); // another drive: stays absolute
  const posix = relative.split(path.sep).join('/');
  if (posix === '') return '.';
  return posix.startsWith('../') || posix === '..' ? posix : `./${posix}`;
}

/** pi's agent folder as pi finds it: PI_CODING_AGENT_DIR, else ~/.pi/agent (the same on pi 0.85 and 1.x). */
export function piAgentDir(env: NodeJS.ProcessEnv): string {
  const dir = env.PI_CODING_AGENT_DIR?.trim();
  if (dir) return dir.startsWith('~/') ? path.join(env.HOME ?? os.homedir(), dir.slice(2)) : path.resolve(dir);
  return path.join(env.HOME ?? os.homedir(), '.pi', 'agent');
}

/** The variable that says where best-of-N's trees go. */
export const WORKTREES_ENV = 'FACTORY_WORKTREES';

/** Where best-of-N's trees go: `$FACTORY_WORKTREES`, else `<tmp>/factory-worktrees` (outside every repository). */
export function worktreeBase(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env[WORKTREES_ENV]?.trim();
  return path.resolve(chosen || path.join(os.tmpdir(), 'factory-worktrees'));
}
