// The baseline through the real pi and the scripted model: the gates run once on HEAD, in a worktree of their own,
// while the primer reads. A test red on HEAD (a legacy one nobody asked the arms about) is not held against an arm
// that leaves it red the same way; an arm's own new failure still is; an arm that turns a red gate green gets the
// credit and ranks first among the green.
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes } from '../../src/demo.js';
import type { RunEvent } from '../../src/events.js';
import { bonBench, runBon, treeStatus, type BonBench } from '../helpers/bon.js';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

const LEGACY = "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('legacy parser keeps its quirk', () => assert.equal('quirk', 'fixed'));\n";
type Ev<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

describe('bon baseline on HEAD (real pi, scripted model)', () => {
  it('a legacy test red on HEAD is not held against the arms; an arm\'s own new failure still is', async () => {
    bench = await bonBench(bonTapes(0), { 'test/legacy.test.js': LEGACY });
    const out = await runBon(bench);
    const baseline = out.events.find((e): e is Ev<'baseline'> => e.type === 'baseline')!;
    expect(baseline.gates).toEqual([expect.objectContaining({ gate: 'node --test', ok: false })]);
    // Before any arm was judged.
    expect(out.events.indexOf(baseline)).toBeLessThan(out.events.findIndex((e) => e.type === 'gate_result'));
    const gates = (phase: string) => out.events.filter((e): e is Ev<'gate_result'> => e.type === 'gate_result' && e.phase === phase && e.gate === 'node --test');
    // beta and gamma: farewell passes, legacy fails as on HEAD — excused, green.
    for (const phase of ['arm_2', 'arm_3']) {
      expect(gates(phase)).toEqual([expect.objectContaining({ ok: false, preexisting: true })]);
      expect(gates(phase)[0]!.motif).toContain('legacy parser keeps its quirk');
    }
    const ranking = (out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>).ranking;
    const arm = (k: number) => ranking.find((r) => r.arm === k)!;
    expect(arm(2).green).toBe(true);
    expect(arm(3).green).toBe(true);
    // Said in the verdict: not held against them, not proof of their work either.
    expect([arm(2).excused, arm(3).excused, arm(2).fixed]).toEqual([['node --test'], ['node --test'], undefined]);
    // alpha: its farewell fails an assertion HEAD never reached — its own failure.
    expect(gates('arm_1')).toEqual([expect.not.objectContaining({ preexisting: true })]);
    expect(arm(1).green).toBe(false);
    expect(arm(1).motif).toMatch(/says goodbye by name/);
    expect(out.exit).toBe(0);
    // The baseline's worktree is gone and the user's tree untouched.
    expect(treeStatus(bench.dir)).toBe('');
  });

  it('an arm that turns a gate red on HEAD green gets the credit in its verdict; a gate green on HEAD gives none', async () => {
    // Two gates: the suite (red on HEAD: farewell.js is missing) and a lint nobody breaks.
    const roster = 'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\n    - run: node --check src/greet.js\n      timeout: 60\n';
    bench = await bonBench(bonTapes(0), { 'adws/adw_config/factory.config.yaml': roster });
    const out = await runBon(bench);
    const baseline = out.events.find((e): e is Ev<'baseline'> => e.type === 'baseline')!;
    expect(baseline.gates.map((g) => [g.gate, g.ok])).toEqual([['node --test', false], ['node --check src/greet.js', true]]);
    const harvest = out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>;
    expect(harvest.ranking.filter((r) => r.green).map((r) => [r.arm, r.fixed])).toEqual([[2, ['node --test']], [3, ['node --test']]]);
    expect(harvest.winner).toBe(2);
  });
});
