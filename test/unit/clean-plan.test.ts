// Which runs `factory clean` removes (src/clean/plan.ts) and how its command line is read (src/commands/clean.ts).
import { describe, expect, it } from 'vitest';
import { cleanArgs } from '../../src/commands/clean.js';
import { UsageError } from '../../src/contract/errors.js';
import { DEFAULT_KEEP, DEFAULT_OLDER_THAN_MS, parseAge, planClean, type RunFacts } from '../../src/clean/plan.js';

const DAY = 86_400_000;
const NOW = 100 * DAY;
const run = (adwId: string, daysAgo: number, more: Partial<RunFacts> = {}): RunFacts => ({
  adwId,
  startedAt: NOW - daysAgo * DAY,
  applied: false,
  ...more,
});
const ids = (runs: readonly RunFacts[]) => runs.map((r) => r.adwId);

describe('planClean', () => {
  it('removes runs older than the age that are not among the newest kept', () => {
    const runs = [run('a', 30), run('b', 20), run('c', 15), run('d', 2), run('e', 1)];
    expect(ids(planClean(runs, { olderThanMs: 14 * DAY, keep: 1 }, NOW).remove)).toEqual(['c', 'b', 'a']);
    // The newest 4 stay whatever their age.
    expect(ids(planClean(runs, { olderThanMs: 14 * DAY, keep: 4 }, NOW).remove)).toEqual(['a']);
    // Young runs stay whatever --keep says.
    expect(ids(planClean(runs, { olderThanMs: 25 * DAY, keep: 0 }, NOW).remove)).toEqual(['a']);
    expect(ids(planClean(runs, { olderThanMs: 0, keep: 0 }, NOW).remove)).toEqual(['e', 'd', 'c', 'b', 'a']);
  });

  it('never a running run, nor the last harvest not yet applied', () => {
    const runs = [
      run('old-live', 90, { running: { pid: 42 } }),
      run('h1', 60, { harvestAt: NOW - 60 * DAY }),
      run('h2', 50, { harvestAt: NOW - 50 * DAY }),
      run('plain', 40),
    ];
    const plan = planClean(runs, { olderThanMs: 0, keep: 0 }, NOW);
    expect(ids(plan.remove)).toEqual(['plain', 'h1']);
    expect(plan.kept.map((r) => [r.adwId, r.kept])).toEqual([
      ['h2', { why: 'unapplied-harvest' }],
      ['old-live', { why: 'running', pid: 42 }],
    ]);
  });

  it('an applied last harvest protects nothing: an older unapplied one is not the last', () => {
    const runs = [
      run('h1', 60, { harvestAt: NOW - 60 * DAY }),
      run('h2', 50, { harvestAt: NOW - 50 * DAY, applied: true }),
    ];
    expect(ids(planClean(runs, { olderThanMs: 0, keep: 0 }, NOW).remove)).toEqual(['h2', 'h1']);
  });
});

describe('the command line', () => {
  it('reads ages in minutes, hours, days and weeks, and 0 for any age', () => {
    expect(parseAge('14d')).toBe(14 * DAY);
    expect(parseAge('2w')).toBe(14 * DAY);
    expect(parseAge('12h')).toBe(DAY / 2);
    expect(parseAge('30m')).toBe(30 * 60_000);
    expect(parseAge('0')).toBe(0);
    for (const bad of ['', '14', 'd', '-1d', '3x', '1d2h']) expect(parseAge(bad), bad).toBeUndefined();
  });

  it('defaults to 14 days and the newest 20; refuses bad values and arguments in one line', () => {
    expect(cleanArgs([], {})).toEqual({ olderThanMs: DEFAULT_OLDER_THAN_MS, keep: DEFAULT_KEEP, dryRun: false });
    expect(DEFAULT_OLDER_THAN_MS).toBe(14 * DAY);
    expect(DEFAULT_KEEP).toBe(20);
    expect(cleanArgs([], { 'older-than': '2w', keep: 0, 'dry-run': true })).toEqual({
      olderThanMs: 14 * DAY,
      keep: 0,
      dryRun: true,
    });
    expect(() => cleanArgs([], { 'older-than': 'soon' })).toThrow(UsageError);
    expect(() => cleanArgs([], { keep: -1 })).toThrow(/--keep must be a whole number/);
    expect(() => cleanArgs([], { keep: Number.NaN })).toThrow(/--keep/);
    expect(() => cleanArgs([], { keep: 1.5 })).toThrow(/--keep/);
    expect(() => cleanArgs(['all'], {})).toThrow(/usage: factory clean/);
  });
});
