// Where a workspace keeps the factory's runtime data. One function, so no module invents its own layout.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

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

/** The git top-level of `dir`, or `dir` itself outside a work tree. */
export function resolveWorkspaceRoot(dir: string): string {
  const abs = path.resolve(dir);
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd: abs,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return top || abs;
  } catch {
    return abs;
  }
}
