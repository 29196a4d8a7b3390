// The `.pi/tests` battery: the node's extensions loaded by the real pi with the scripted model, at zero tokens.
// The doctor runs it with the factory's own vitest (never a recorded result); `--quick` skips it.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { childEnv, emptyDotEnv } from '../env.js';
import { lastLine, runProgram } from './probes.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

const DEFAULT_BATTERY_TIMEOUT_MS = 600_000;

/** `Tests  1 failed | 11 passed (12)` → the counts vitest printed (colour codes already off). */
export function vitestSummary(output: string): { passed: number; failed: number; skipped: number } | undefined {
  const line = output.split(/\r?\n/).find((l) => /^\s*Tests\s+\d/.test(l));
  if (!line) return undefined;
  const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(line)?.[1] ?? 0);
  return { passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}

/** The first failing test vitest names (`FAIL  file > suite > test`), for a one-line detail. */
function firstFailure(output: string): string | undefined {
  const lines = output.split(/\r?\n/);
  return (lines.find((l) => /^\s*FAIL\s/.test(l)) ?? lines.find((l) => /^\s*[×✗]\s/.test(l)))?.trim().replace(/\s+/g, ' ');
}

/** Battery files the default run uses: `.pi/tests/battery*` once the battery exists, else the whole folder. */
export function defaultBattery(factoryRoot: string): { cwd: string; files: string[] } {
  const dir = path.join(factoryRoot, '.pi', 'tests');
  let battery: string[] = [];
  try {
    battery = readdirSync(dir).filter((f) => f.startsWith('battery')).map((f) => `.pi/tests/${f}`);
  } catch {
    // no tests folder: the battery check reports it
  }
  return { cwd: factoryRoot, files: battery.length > 0 ? battery.sort() : ['.pi/tests'] };
}

export function batteryCheck(): DoctorCheck {
  return {
    id: 'tests.battery',
    category: 'tests',
    severity: 'required',
    title: '.pi/tests battery',
    slow: true,
    async run(ctx: DoctorContext): Promise<CheckResult> {
      const battery = ctx.battery ?? defaultBattery(ctx.factoryRoot);
      const shown = `npx vitest run ${battery.files.join(' ')}`;
      const fix = `cd ${battery.cwd} && ${shown}`;
      const vitest = path.join(ctx.factoryRoot, 'node_modules', 'vitest', 'vitest.mjs');
      if (!existsSync(vitest)) return { status: 'fail', detail: `vitest is not installed in ${ctx.factoryRoot}`, fix: `cd ${ctx.factoryRoot} && npm ci` };
      const missing = battery.files.filter((f) => !existsSync(path.resolve(battery.cwd, f)));
      if (missing.length > 0) return { status: 'fail', detail: `battery not found: ${missing.join(', ')}`, fix: `git -C ${ctx.factoryRoot} checkout -- .pi/tests` };
      // The factory's own tests: the real environment minus other programs' secrets, colours off for parsing.
      const env = childEnv({ real: ctx.env, dotenv: emptyDotEnv(ctx.root), extra: { NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' } });
      const timeoutMs = ctx.batteryTimeoutMs ?? DEFAULT_BATTERY_TIMEOUT_MS;
      const out = await runProgram(process.execPath, [vitest, 'run', ...battery.files], { cwd: battery.cwd, env, timeoutMs });
      const text = `${out.stdout}\n${out.stderr}`;
      const seconds = (out.ms / 1000).toFixed(1);
      if (out.timedOut) return { status: 'fail', detail: `the battery did not finish within ${Math.round(timeoutMs / 1000)} s`, fix };
      const summary = vitestSummary(text);
      if (out.code === 0 && summary && summary.failed === 0) return { status: 'ok', detail: `${summary.passed} passed in ${seconds} s` };
      const counts = summary ? `${summary.failed} failed, ${summary.passed} passed` : `vitest exit ${out.code ?? 'signal'}`;
      const where = firstFailure(text) ?? lastLine(text);
      return { status: 'fail', detail: `${counts}${where ? `: ${where}` : ''}`, fix };
    },
  };
}
