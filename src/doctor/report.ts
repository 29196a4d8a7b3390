// The doctor's outputs without a screen: headless rows for stderr and the `--json` document. Pure.
import { displayWidth, pad } from '../contract/text.js';
import { DOCTOR_CATEGORIES, type DoctorResult, type DoctorStatus } from './types.js';

export const STATUS_MARK: Record<DoctorStatus, string> = { ok: '✓', warn: '!', fail: '✗', skipped: '–' };

export interface DoctorCounts {
  ok: number;
  warn: number;
  fail: number;
  skipped: number;
}

export function doctorCounts(results: DoctorResult[]): DoctorCounts {
  const counts: DoctorCounts = { ok: 0, warn: 0, fail: 0, skipped: 0 };
  for (const r of results) counts[r.status] += 1;
  return counts;
}

/** "18 ok, 1 warning, 0 failed, 2 skipped". */
export function doctorSummary(results: DoctorResult[]): string {
  const c = doctorCounts(results);
  return `${c.ok} ok, ${c.warn} warning${c.warn === 1 ? '' : 's'}, ${c.fail} failed, ${c.skipped} skipped`;
}

/** Results grouped by category in display order, each group in the given order. */
function groupByCategory(
  results: DoctorResult[],
): Array<{ category: DoctorResult['category']; results: DoctorResult[] }> {
  return DOCTOR_CATEGORIES.map((category) => ({
    category,
    results: results.filter((r) => r.category === category),
  })).filter((g) => g.results.length > 0);
}

/**
 * Rows for stderr: a category line, then `  ✓ id  detail` per check (`(optional)` marks an optional one that
 * is not ok), a `fix:` line under a warning or failure, and the summary last.
 */
export function formatDoctorRows(results: DoctorResult[]): string[] {
  const width = Math.max(0, ...results.map((r) => displayWidth(r.id)));
  const rows: string[] = [];
  for (const group of groupByCategory(results)) {
    rows.push(group.category);
    for (const r of group.results) {
      const optional = r.severity === 'optional' && r.status !== 'ok' ? ' (optional)' : '';
      rows.push(`  ${STATUS_MARK[r.status]} ${pad(r.id, width)}  ${r.detail}${optional}`);
      if (r.fix) rows.push(`    ${' '.repeat(width)}  fix: ${r.fix}`);
    }
  }
  rows.push(doctorSummary(results));
  return rows;
}

export interface DoctorJson {
  checks: Array<{
    id: string;
    category: string;
    severity: string;
    status: DoctorStatus;
    detail: string;
    fix: string | null;
  }>;
}

/** The `--json` document (`fix` is null when there is nothing to fix). */
export function doctorJson(results: DoctorResult[]): DoctorJson {
  return {
    checks: results.map((r) => ({
      id: r.id,
      category: r.category,
      severity: r.severity,
      status: r.status,
      detail: r.detail,
      fix: r.fix ?? null,
    })),
  };
}
