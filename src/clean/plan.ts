// Which runs `factory clean` removes (pure): the runs older than `--older-than` that are not among the newest
// `--keep`, never a run that is running, never the last harvest not yet applied (its winner is still the proposal
// the user may take with `factory apply <id>`).

export interface CleanOptions {
  /** Runs started longer ago than this (ms) may go; 0: any age. */
  olderThanMs: number;
  /** The newest this many runs stay whatever their age. */
  keep: number;
  dryRun: boolean;
}

/** What clean knows of one run from what it left (see traces.ts). */
export interface RunFacts {
  adwId: string;
  /** When it started (its run log's first event, else the oldest of its leftovers), ms since the epoch. */
  startedAt: number;
  /** Its cockpit is alive (the trace index's owner, or the owner of its worktrees), or nothing says it ended. */
  running?: { pid?: number };
  /** When its harvest was written, when it has one. */
  harvestAt?: number;
  /** An arm of its harvest was applied (an `apply` event that applied). */
  applied: boolean;
}

export type KeptWhy = { why: 'running'; pid?: number } | { why: 'unapplied-harvest' } | { why: 'recent' };

export interface CleanPlan {
  remove: RunFacts[];
  kept: Array<RunFacts & { kept: KeptWhy }>;
}

export const DEFAULT_OLDER_THAN_MS = 14 * 24 * 3_600_000;
export const DEFAULT_KEEP = 20;

export function planClean(
  runs: readonly RunFacts[],
  opts: Pick<CleanOptions, 'olderThanMs' | 'keep'>,
  now: number,
): CleanPlan {
  const newest = [...runs].sort((a, b) => b.startedAt - a.startedAt || (a.adwId < b.adwId ? -1 : 1));
  const lastHarvest = [...runs].filter((r) => r.harvestAt !== undefined).sort((a, b) => b.harvestAt! - a.harvestAt!)[0];
  const plan: CleanPlan = { remove: [], kept: [] };
  newest.forEach((run, index) => {
    if (run.running)
      plan.kept.push({
        ...run,
        kept: { why: 'running', ...(run.running.pid !== undefined ? { pid: run.running.pid } : {}) },
      });
    else if (run === lastHarvest && !run.applied) plan.kept.push({ ...run, kept: { why: 'unapplied-harvest' } });
    else if (index < opts.keep || now - run.startedAt < opts.olderThanMs)
      plan.kept.push({ ...run, kept: { why: 'recent' } });
    else plan.remove.push(run);
  });
  return plan;
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 24 * 3_600_000, w: 7 * 24 * 3_600_000 };

/** `--older-than`: `14d`, `2w`, `12h`, `30m`, or `0` (any age) → ms; undefined when it is none of those. */
export function parseAge(text: string): number | undefined {
  const compact = text.trim().toLowerCase();
  if (compact === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)(m|h|d|w)$/.exec(compact);
  return m ? Math.round(Number(m[1]) * UNITS[m[2]!]!) : undefined;
}
