// The fan-out forecast of a repo's second run, through the built CLI, the real pi and the scripted model: arms that
// run a loud test suite several times (more calls than the primer made, each test run growing their context) are
// forecast from the primer alone on the first run (a guess), and within 15 % on the second, from the first run's
// arms as factory.db recorded them.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bonBench, SPEC, type BonBench } from '../helpers/bon.js';
import { FACTORY_BIN } from '../helpers/cli.js';
import { DEMO_MODELS } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { call, report, type Step, type Tapes } from '../../src/scripted/tape.js';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

function bon(b: BonBench): Promise<RunEvent[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FACTORY_BIN, 'bon', SPEC, '--models', DEMO_MODELS.join(','), '--json'], {
      cwd: b.dir,
      env: { ...b.env, CI: 'true', FACTORY_WORKTREES: path.join(path.dirname(b.dir), 'trees') },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', () =>
      resolve(
        out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as RunEvent),
      ),
    );
  });
}

function loudSuite(): string {
  const cases = Array.from(
    { length: 40 },
    (_, i) =>
      `test('greets person number ${i} by the full name, whatever its length (${'x'.repeat(60)})', () => {\n  assert.equal(greet('P${i}'), 'Hello, P${i}!');\n});\n`,
  );
  return `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../src/greet.js';\n\n${cases.join('')}`;
}

/** One pass per run; the later pass's primer words its first read differently (a real primer never answers alike). */
function tapes(passes: number): Tapes {
  const file = (content: string) => ({ path: 'src/farewell.js', content });
  const built = {
    status: 'success',
    summary: 'farewell added, the suite passes',
    artifacts: [],
    notes_for_next_agent: '',
    changed_files: ['src/farewell.js'],
  };
  const tests = call('bash', { command: 'node --test 2>&1' });
  const primer = (pass: number): Step[] => [
    call('read', { path: `${'./'.repeat(pass)}${SPEC}` }),
    call('read', { path: 'test/farewell.test.js' }),
    report({ status: 'success', summary: 'Plan: add src/farewell.js; run the suite.', changed_files: [] }),
  ];
  const arm = (body: string, runs: number): Step[] => [
    tests,
    call('write', file(body)),
    ...Array.from({ length: runs }, () => tests),
    report(built),
  ];
  const all = (f: (pass: number) => Step[]) => Array.from({ length: passes }, (_, p) => f(p)).flat();
  return {
    'model:alpha': all((p) => [
      ...primer(p),
      ...arm('export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n', 1),
    ]),
    'model:beta': all(() => arm('export const farewell = (name) => `Goodbye, ${name}!`;\n', 2)),
    'model:gamma': all(() =>
      arm('/** Says goodbye. */\nexport function farewell(name) {\n  return `Goodbye, ${String(name)}!`;\n}\n', 3),
    ),
  };
}

const figures = (events: RunEvent[]) => {
  const forecast = (events.find((e) => e.type === 'forecast') as Extract<RunEvent, { type: 'forecast' }>).forecast;
  const harvest = events.find((e) => e.type === 'harvest') as Extract<RunEvent, { type: 'harvest' }>;
  return {
    forecast,
    predicted: forecast.total.mid - forecast.primer,
    spent: harvest.ranking.reduce((s, r) => s + r.cost, 0),
  };
};

describe('the forecast of a repo that ran before (real pi, scripted model, factory.db)', () => {
  it("the second run is forecast within 15 % from the first run's arms; the line says what it went by", async () => {
    bench = await bonBench(tapes(2), { 'test/greet.test.js': loudSuite() });
    const first = figures(await bon(bench));
    expect(first.forecast.pastArms).toBe(0);
    expect(first.forecast.basis).toMatch(/no past arm of this repo/);
    const second = figures(await bon(bench));
    expect(second.forecast.pastArms).toBe(3);
    expect(second.forecast.basis).toMatch(/does what 3 past arm\(s\) of this repo did \(\d+–\d+ calls\)/);
    expect(second.predicted / second.spent).toBeGreaterThan(0.85);
    expect(second.predicted / second.spent).toBeLessThan(1.15);
    for (const a of second.forecast.perArm) expect(a.low <= a.mid && a.mid <= a.high).toBe(true);
  });
});
