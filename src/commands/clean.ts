// `factory clean [--older-than 14d] [--keep 20] [--dry-run] [--json]`: remove what old runs left (their refs, patches,
// harvest, reports, run log, pi sessions and traces, their rows in factory.db) and every worktree a dead run left,
// never a running run's, never the last harvest not yet applied. Prints what it removed, or with --dry-run what it
// would remove; nothing else is touched (the ledger keeps its one line per pi start).
import fs from 'node:fs';
import { UsageError } from '../contract/errors.js';
import { gitxOk } from '../bon/git/command.js';
import { runFolders, sweepWorktrees } from '../bon/tree/worktrees.js';
import {
  DEFAULT_KEEP,
  DEFAULT_OLDER_THAN_MS,
  parseAge,
  planClean,
  type CleanOptions,
  type KeptWhy,
} from '../clean/plan.js';
import { runLeftovers, type RunLeftovers } from '../clean/traces.js';
import { openSyncedStore } from './runs.js';
import type { CommandFlags, Workspace } from './workspace.js';

export interface CleanFlags {
  'older-than'?: string;
  keep?: number;
  'dry-run'?: boolean;
}

/** The command's options, or a UsageError (exit 2) naming the bad one. Pure. */
export function cleanArgs(args: readonly string[], flags: CleanFlags): CleanOptions {
  if (args.length > 0) throw new UsageError('usage: factory clean [--older-than 14d] [--keep 20] [--dry-run] [--json]');
  const olderThanMs = flags['older-than'] === undefined ? DEFAULT_OLDER_THAN_MS : parseAge(flags['older-than']);
  if (olderThanMs === undefined)
    throw new UsageError(
      `--older-than must be an age such as 14d, 2w, 12h or 0 (got ${JSON.stringify(flags['older-than'])})`,
    );
  const keep = flags.keep ?? DEFAULT_KEEP;
  if (!Number.isInteger(keep) || keep < 0)
    throw new UsageError(`--keep must be a whole number of runs, 0 or more (got ${String(keep)})`);
  return { olderThanMs, keep, dryRun: flags['dry-run'] === true };
}

export interface CleanReport {
  dryRun: boolean;
  removed: Array<{ adwId: string; startedAt: string; refs: string[]; files: string[]; worktrees?: string }>;
  kept: Array<{ adwId: string; why: KeptWhy['why']; pid?: number }>;
  /** Worktree folders of dead runs (removed, or to be), whichever run they belong to. */
  worktrees: string[];
}

async function removeRun(ws: Workspace, run: RunLeftovers): Promise<void> {
  for (const ref of run.refs) await gitxOk(ws.root, ['update-ref', '-d', ref], { env: ws.real });
  for (const file of run.files) fs.rmSync(file, { recursive: true, force: true });
}

/** Gather, plan, remove (unless dry), report. */
export async function clean(ws: Workspace, opts: CleanOptions, now = Date.now()): Promise<CleanReport> {
  const store = await openSyncedStore(ws.paths, ws.redact);
  try {
    const runs = await runLeftovers(ws.root, ws.paths, store.listRuns(1_000_000), ws.real);
    const plan = planClean(runs, opts, now);
    const leftover = [...runFolders(ws.root, ws.real).leftover.values()];
    if (!opts.dryRun) {
      for (const run of plan.remove as RunLeftovers[]) {
        await removeRun(ws, run);
        store.forgetRun(run.adwId, run.sessionIds);
      }
      await sweepWorktrees(ws.root, { env: ws.real });
    }
    return {
      dryRun: opts.dryRun,
      removed: (plan.remove as RunLeftovers[]).map((run) => ({
        adwId: run.adwId,
        startedAt: new Date(run.startedAt).toISOString(),
        refs: run.refs,
        files: run.files,
        ...(run.worktrees ? { worktrees: run.worktrees } : {}),
      })),
      kept: plan.kept
        .filter((run) => run.kept.why !== 'recent')
        .map((run) => ({
          adwId: run.adwId,
          why: run.kept.why,
          ...('pid' in run.kept && run.kept.pid !== undefined ? { pid: run.kept.pid } : {}),
        })),
      worktrees: leftover,
    };
  } finally {
    store.close();
  }
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function ageText(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  return `${Math.round(ms / 60_000)}m`;
}

export function formatClean(report: CleanReport, opts: CleanOptions): string {
  const verb = report.dryRun ? 'would remove' : 'removed';
  const lines: string[] = [];
  for (const run of report.removed) {
    const parts = [count(run.refs.length, 'ref'), count(run.files.length, 'file')];
    if (run.worktrees) parts.push('its worktrees');
    lines.push(`${verb} run ${run.adwId} (started ${run.startedAt.slice(0, 10)}): ${parts.join(', ')}`);
    for (const ref of run.refs) lines.push(`  ${ref}`);
    for (const file of run.files) lines.push(`  ${file}`);
  }
  const owned = new Set(report.removed.flatMap((run) => (run.worktrees ? [run.worktrees] : [])));
  for (const folder of report.worktrees.filter((f) => !owned.has(f)))
    lines.push(`${verb} the worktrees a dead run left: ${folder}`);
  for (const run of report.kept) {
    lines.push(
      run.why === 'running'
        ? `kept run ${run.adwId}: it is running${run.pid !== undefined ? ` (pid ${run.pid})` : ''}`
        : `kept run ${run.adwId}: the last harvest, not applied yet (factory apply ${run.adwId})`,
    );
  }
  const age = opts.olderThanMs === 0 ? 'any age' : `older than ${ageText(opts.olderThanMs)}`;
  const total = report.removed.length;
  const scope = `runs of ${age}, beyond the newest ${opts.keep}`;
  lines.push(
    total === 0 && report.worktrees.length === 0
      ? `nothing to clean (${scope})`
      : `${report.dryRun ? 'dry run: ' : ''}${verb} ${count(total, 'run')} (${scope})`,
  );
  return `${lines.join('\n')}\n`;
}

export async function cleanOutput(
  ws: Workspace,
  args: readonly string[],
  flags: CommandFlags & CleanFlags,
): Promise<string> {
  const opts = cleanArgs(args, flags);
  const report = await clean(ws, opts);
  return flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatClean(report, opts);
}
