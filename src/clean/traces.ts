// What runs leave behind in a workspace, run by run, found where the code that writes each thing puts it:
//   refs/factory/<adw_id>/arm-<k>        a losing arm's patch as a commit (src/bon/patch/patch.ts keepArmRef)
//   adws/adw_data/bon/<adw_id>/          each arm's patch and harvest.json (src/bon/check.ts, rank.ts)
//   adws/adw_data/reports/<adw_id>/      --report's report.md / junit.xml (src/headless/ciReport.ts)
//   adws/adw_data/traces/runs/<id>.jsonl the run log (src/trace/runLog.ts)
//   adws/adw_data/sessions/…<session>…   pi's session files and stderr logs, one per pi start the ledger names
//   adws/adw_data/traces/harness/<session>.jsonl  factory-obs's trace of each session
//   <worktree base>/<repo key>/<adw_id>/ the run's worktrees, while it runs or once it was killed (src/bon/tree/worktrees.ts)
// and whether the run is running (the trace index's live owner, or the live owner of its worktrees) and whether
// its harvest was applied (an `apply` event in its run log).
import fs from 'node:fs';
import path from 'node:path';
import { gitxText } from '../bon/git/command.js';
import { runFolders } from '../bon/tree/worktrees.js';
import type { WorkspacePaths } from '../config/paths.js';
import { parseObjectLine, readCompleteLines } from '../trace/jsonl.js';
import { harnessFileName, listRunLogs, readRunLog, runLogPath } from '../trace/runLog.js';
import type { RunRow } from '../trace/store.js';
import type { RunFacts } from './plan.js';

export interface RunLeftovers extends RunFacts {
  refs: string[];
  /** Files and folders under adws/adw_data, absolute. */
  files: string[];
  /** The run's folder of worktrees, when one is left. */
  worktrees?: string;
  sessionIds: string[];
}

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A session id as pi writes them (a uuid); anything else in the ledger names no file clean may remove. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{7,}$/;

function entries(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Session ids per run, from the ledger (one line per pi start, `adw_id` naming the run); a session two runs name is neither's to remove. */
function ledgerSessions(paths: WorkspacePaths): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const runsOf = new Map<string, Set<string>>();
  for (const line of readCompleteLines(paths.ledgerFile).lines) {
    const record = parseObjectLine(line);
    if (
      typeof record?.adw_id !== 'string' ||
      typeof record.session_id !== 'string' ||
      !SESSION_ID.test(record.session_id)
    )
      continue;
    const ids = out.get(record.adw_id) ?? new Set<string>();
    ids.add(record.session_id);
    out.set(record.adw_id, ids);
    runsOf.set(record.session_id, (runsOf.get(record.session_id) ?? new Set<string>()).add(record.adw_id));
  }
  for (const ids of out.values()) for (const id of ids) if (runsOf.get(id)!.size > 1) ids.delete(id);
  return out;
}

/** The refs under refs/factory/, by run, with the newest commit time of each run's refs (ms). */
async function factoryRefs(
  root: string,
  env?: NodeJS.ProcessEnv,
): Promise<Map<string, { refs: string[]; at: number }>> {
  // A workspace that is no git repository has no refs (and no best-of-N run).
  const text = await gitxText(
    root,
    ['for-each-ref', '--format=%(refname) %(committerdate:unix)', 'refs/factory/'],
    env ? { env } : undefined,
  ).catch(() => '');
  const out = new Map<string, { refs: string[]; at: number }>();
  for (const line of text.split('\n').filter(Boolean)) {
    const [ref, at] = line.split(' ') as [string, string | undefined];
    const id = ref.split('/')[2];
    if (id === undefined) continue;
    const entry = out.get(id) ?? { refs: [], at: 0 };
    entry.refs.push(ref);
    entry.at = Math.max(entry.at, Number(at ?? 0) * 1000);
    out.set(id, entry);
  }
  return out;
}

/** Every run the workspace holds anything of, with its leftovers and what decides whether it may go. */
export async function runLeftovers(
  root: string,
  paths: WorkspacePaths,
  index: readonly RunRow[],
  env?: NodeJS.ProcessEnv,
): Promise<RunLeftovers[]> {
  const bonDir = path.join(paths.dataDir, 'bon');
  const reportsDir = path.join(paths.dataDir, 'reports');
  const refs = await factoryRefs(root, env);
  const folders = runFolders(root, env);
  const sessions = ledgerSessions(paths);
  const rows = new Map(index.map((row) => [row.adwId, row]));
  const ids = new Set([
    ...listRunLogs(paths),
    ...entries(bonDir),
    ...entries(reportsDir),
    ...refs.keys(),
    ...folders.leftover.keys(),
    ...folders.live.keys(),
    ...rows.keys(),
  ]);
  const sessionEntries = entries(paths.sessionsDir);
  const out: RunLeftovers[] = [];
  for (const adwId of [...ids].filter((id) => RUN_ID.test(id)).sort()) {
    const runLog = runLogPath(paths, adwId);
    const events = fs.existsSync(runLog) ? readRunLog(runLog) : [];
    const sessionIds = [...(sessions.get(adwId) ?? [])];
    const files = [path.join(bonDir, adwId), path.join(reportsDir, adwId), runLog];
    for (const id of sessionIds) {
      files.push(
        ...sessionEntries
          .filter((name) => name.endsWith(`_${id}.jsonl`) || name === `${id}.jsonl` || name === `${id}.stderr.log`)
          .map((name) => path.join(paths.sessionsDir, name)),
      );
      files.push(path.join(paths.harnessTracesDir, harnessFileName(id)));
    }
    const existing = files.filter((file) => fs.existsSync(file));
    const worktrees = folders.leftover.get(adwId) ?? folders.live.get(adwId);
    const row = rows.get(adwId);
    const started = events.find((e) => e.type === 'run_started')?.ts ?? row?.startedAt;
    const times = [...existing, ...(worktrees ? [worktrees] : [])]
      .map(mtimeOf)
      .filter((t): t is number => t !== undefined);
    const refTime = refs.get(adwId)?.at;
    const startedAt = started || Math.min(...times, refTime || Infinity);
    const finished = events.some((e) => e.type === 'run_finished') || (row !== undefined && row.status !== 'running');
    // Running: the index's owner is alive (or the run was never claimed and never ended), or its worktrees' owner is.
    const indexLive = row !== undefined && row.status === 'running' && row.abandoned !== true;
    const treesLive = folders.live.has(adwId);
    const logOnly = row === undefined && events.length > 0 && !finished;
    const running =
      indexLive || treesLive || logOnly ? { ...(row?.livePid !== undefined ? { pid: row.livePid } : {}) } : undefined;
    const harvestAt = mtimeOf(path.join(bonDir, adwId, 'harvest.json'));
    out.push({
      adwId,
      startedAt: Number.isFinite(startedAt) ? startedAt : 0,
      ...(running ? { running } : {}),
      ...(harvestAt !== undefined ? { harvestAt } : {}),
      applied: events.some((e) => e.type === 'apply' && e.applied),
      refs: refs.get(adwId)?.refs ?? [],
      files: existing,
      ...(worktrees ? { worktrees } : {}),
      sessionIds,
    });
  }
  return out;
}
