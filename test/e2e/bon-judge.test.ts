// The optional judge of best-of-N through the real pi (json mode, one process per attempt) and the scripted model:
// it reads the green arms' patches and orders them through the typed gate; the code checks the order (every green
// arm once, nothing else), corrects a wrong one in the judge's own session, and falls back to its own order when
// the judge fails. The judge's cost is its own line, in no arm's.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { DEFAULT_SCRIPTED_MODELS } from '../../src/scripted/agentDir.js';
import { contentText, fail, report, type Step } from '../../src/scripted/tape.js';
import { bonBench, runBon, type BonBench } from '../helpers/bon.js';
import { git } from '../helpers/repo.js';

const ROSTER =
  'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\nbon:\n  judge: true\nagents:\n  judge:\n    model: scripted/delta\n';
const MODELS = [
  ...DEFAULT_SCRIPTED_MODELS,
  { id: 'delta', name: 'Scripted Delta (judge)', cost: { input: 0.5, output: 2, cacheRead: 0.05 } },
];

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

type Ev<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
const judged = (ranking: Array<[number, string]>) =>
  report({ status: 'success', summary: 'ranked', ranking: ranking.map(([arm, reason]) => ({ arm, reason })) });

async function judgeRun(judge: Step[], apply = false) {
  bench = await bonBench(
    { ...bonTapes(0), 'model:delta': judge },
    { 'adws/adw_config/factory.config.yaml': ROSTER },
    MODELS,
  );
  const out = await runBon(bench, apply ? { args: { apply: true } } : {});
  const harvest = out.events.find((e): e is Ev<'harvest'> => e.type === 'harvest')!;
  return { out, harvest, asked: bench.rig.model.requestsFor('model:delta') };
}

describe('bon --judge (real pi, scripted model)', () => {
  it("the judge's order among the green arms is the harvest's: gamma first though dearer, why #1 says the judge's reason", async () => {
    const { out, harvest, asked } = await judgeRun([
      judged([
        [3, 'documents farewell and coerces the name'],
        [2, 'correct but bare'],
      ]),
    ]);
    expect(out.exit).toBe(0);
    expect(harvest.ranking.map((r) => r.arm)).toEqual([3, 2, 1]);
    expect(harvest.winner).toBe(3);
    expect(harvest.judge?.ranking.map((r) => r.arm)).toEqual([3, 2]);
    // The ask carried both green patches as fenced data, and not the red arm's.
    const ask = contentText(asked[0]!.body.messages!.find((m) => m.role === 'user')!.content);
    expect(ask).toContain('<<<patch of arm 2');
    expect(ask).toContain('<<<patch of arm 3');
    expect(ask).not.toContain('<<<patch of arm 1');
    expect(ask).toContain('return `Goodbye, ${who}!`;');
    // Its cost is its own: the judge phase's, in no arm's, in the run's total.
    const judgePhase = out.events.find((e): e is Ev<'phase_ok'> => e.type === 'phase_ok' && e.phase === 'judge')!;
    expect(judgePhase.cost).toBeGreaterThan(0);
    expect(harvest.judge?.cost).toBeCloseTo(judgePhase.cost, 9);
    const finished = out.events.at(-1) as Ev<'run_finished'>;
    const arms = harvest.ranking.reduce((s, r) => s + r.cost, 0);
    expect(finished.cost).toBeCloseTo(harvest.primer.cost + arms + judgePhase.cost, 6);
    const file = JSON.parse(fs.readFileSync(path.join(harvest.harvestFile), 'utf8')) as {
      why: string;
      winner: number;
      judge: { ranking: unknown[] };
    };
    expect(file.winner).toBe(3);
    expect(file.why).toBe(
      'why #1: the judge ranked arm_3 (scripted/gamma) first among the green — documents farewell and coerces the name',
    );
  });

  it("--apply applies the judge's winner (gamma, dearer), not the cheapest green arm", async () => {
    const { out, harvest } = await judgeRun(
      [
        judged([
          [3, 'documents farewell and coerces the name'],
          [2, 'correct but bare'],
        ]),
      ],
      true,
    );
    expect(harvest.winner).toBe(3);
    expect(harvest.ranking.find((r) => r.arm === 2)!.cost).toBeLessThan(harvest.ranking.find((r) => r.arm === 3)!.cost);
    const applied = out.events.filter((e): e is Ev<'apply'> => e.type === 'apply');
    expect(applied).toEqual([expect.objectContaining({ arm: 3, applied: true })]);
    expect(out.exit).toBe(0);
    expect(git(bench!.dir, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
    expect(fs.readFileSync(path.join(bench!.dir, 'src/farewell.js'), 'utf8')).toContain('/** Says goodbye. */');
  });

  it('an order that names a red arm is sent back in the same session with what is wrong; the corrected one stands', async () => {
    const { harvest, asked } = await judgeRun([
      judged([
        [1, 'shortest'],
        [2, 'fine'],
      ]),
      judged([
        [2, 'fine'],
        [3, 'longer'],
      ]),
    ]);
    expect(asked).toHaveLength(2);
    const correction = asked[1]!.body
      .messages!.filter((m) => m.role === 'user')
      .map((m) => contentText(m.content))
      .at(-1)!;
    expect(correction).toContain('ranking names arm 1, which you were not shown: rank only arms 2, 3');
    expect(harvest.winner).toBe(2);
    expect(harvest.judge?.ranking.map((r) => r.arm)).toEqual([2, 3]);
  });

  it("a judge that fails for good leaves the code's order: the cheapest green wins, the run goes on", async () => {
    const { out, harvest } = await judgeRun([
      fail(400, { times: Infinity, body: { error: { message: 'bad judge' } } }),
    ]);
    expect(out.events.some((e) => e.type === 'phase_failed' && e.phase === 'judge')).toBe(true);
    expect(harvest.judge).toBeUndefined();
    expect(harvest.winner).toBe(2);
    expect(out.exit).toBe(0);
  });
});
