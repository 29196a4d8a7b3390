// Where a workspace keeps the factory's runtime data. One function, so no module invents its own layout.
import path from 'node:path';
import { GitError, topLevel } from './git.js';

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

/** The git top-level of `dir`, or `dir` itself outside a work tree (git runs through the supervised spawner). */
export async function resolveWorkspaceRoot(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  try {
    return (await topLevel(abs, { timeoutMs: 10_000 })) || abs;
  } catch (error) {
    if (error instanceof GitError) return abs;
    throw error;
  }
}
