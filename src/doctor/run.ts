// Running the doctor: every selected check at once (the wall is the slowest probe, not the sum), each result
// streamed the moment it resolves. A check that throws is a failed check, never a crashed doctor.
import { flatLine } from '../contract/text.js';
import { doctorChecks } from './checks.js';
import type { CheckResult, DoctorCheck, DoctorContext, DoctorResult } from './types.js';

export interface RunDoctorOptions {
  /** Ids or id prefixes (`tools`, `node.ext`, `models.route.builder`); empty/absent = every check. */
  only?: string[];
  /** Skip the slow checks (the battery): they are reported as skipped. */
  quick?: boolean;
  /** Called once when a check starts (for a spinner) — every selected check starts at once. */
  onStart?(check: DoctorCheck): void;
  /** Called once per check, as soon as it resolves. */
  onUpdate?(id: string, result: DoctorResult): void;
  /** The checks to run (default `doctorChecks(ctx)`); tests give fakes of probes that cannot be made real. */
  checks?: DoctorCheck[];
}

/** `id` selected by `only`: equal, or under a selected prefix (`node` selects `node.ext.factory-obs`). */
export function selects(only: string[] | undefined, id: string): boolean {
  if (!only || only.length === 0) return true;
  return only.some((sel) => id === sel || id.startsWith(`${sel}.`));
}

/** Selectors that match no check: `factory doctor <id…>` turns them into a usage error (exit 2). */
export function unknownSelectors(checks: DoctorCheck[], only: string[]): string[] {
  return only.filter((sel) => !checks.some((c) => selects([sel], c.id)));
}

function finish(check: DoctorCheck, outcome: CheckResult, ms: number): DoctorResult {
  const result: DoctorResult = {
    id: check.id,
    category: check.category,
    severity: check.severity,
    title: check.title,
    status: outcome.status,
    detail: flatLine(outcome.detail),
    ms,
  };
  if (outcome.fix && outcome.status !== 'ok' && outcome.status !== 'skipped') result.fix = flatLine(outcome.fix);
  return result;
}

/** Runs the selected checks concurrently; resolves with every result, in the checks' order. */
export async function runDoctor(ctx: DoctorContext, opts: RunDoctorOptions = {}): Promise<DoctorResult[]> {
  // A fresh context object per run: the per-run probe memo (probes.ts) is keyed by it, so no probe result
  // ever outlives the run that made it.
  const runCtx: DoctorContext = { ...ctx };
  const checks = (opts.checks ?? doctorChecks(runCtx)).filter((c) => selects(opts.only, c.id));
  return Promise.all(
    checks.map(async (check) => {
      const started = performance.now();
      opts.onStart?.(check);
      let outcome: CheckResult;
      if (opts.quick && check.slow) outcome = { status: 'skipped', detail: 'skipped by --quick' };
      else {
        try {
          outcome = await check.run(runCtx);
        } catch (error) {
          outcome = {
            status: 'fail',
            detail: `the check itself failed: ${error instanceof Error ? error.message : String(error)}`,
            fix: `factory doctor ${check.id} (report it if it repeats)`,
          };
        }
      }
      const result = finish(check, outcome, performance.now() - started);
      opts.onUpdate?.(check.id, result);
      return result;
    }),
  );
}

/** 0 when every required check passes (a required warning fails only with `strict`), else 1. */
export function doctorExit(results: DoctorResult[], opts: { strict?: boolean } = {}): 0 | 1 {
  for (const r of results) {
    if (r.status === 'fail' && r.severity === 'required') return 1;
    if (r.status === 'warn' && opts.strict) return 1;
  }
  return 0;
}
