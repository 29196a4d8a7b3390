// The baseline through the real pi and the scripted model: the gates run once on HEAD, in a worktree of their own,
// while the primer reads. A test red on HEAD (a legacy one nobody asked the arms about) is not held against an arm
// that leaves it red the same way; an arm's own new failure still is; an arm that turns a red gate green gets the
// credit and ranks first among the green.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyOutput } from '../../src/commands/apply.js';
import { outcomeLines } from '../../src/commands/runs.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { bonTapes } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { headlessListener } from '../../src/headless/log.js';
import { call, report } from '../../src/scripted/tape.js';
import { bonBench, runBon, treeStatus, type BonBench } from '../helpers/bon.js';
import { git } from '../helpers/repo.js';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

const LEGACY =
  "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('legacy parser keeps its quirk', () => assert.equal('quirk', 'fixed'));\n";
type Ev<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

describe('bon baseline on HEAD (real pi, scripted model)', () => {
  it('a legacy test red on HEAD is not held against the arms, but nothing verified them: unverified, never applied unnamed, exit 1', async () => {
    bench = await bonBench(bonTapes(0), { 'test/legacy.test.js': LEGACY });
    const lines: string[] = [];
    const out = await runBon(bench, {
      args: { apply: true },
      onPrepared: (p) =>
        p.run.subscribe(
          headlessListener({ stdout: { write: () => true }, stderr: { write: (t: string) => lines.push(t) } }, false),
        ),
    });
    const baseline = out.events.find((e): e is Ev<'baseline'> => e.type === 'baseline')!;
    expect(baseline.gates).toEqual([expect.objectContaining({ gate: 'node --test', ok: false })]);
    // Before any arm was judged.
    expect(out.events.indexOf(baseline)).toBeLessThan(out.events.findIndex((e) => e.type === 'gate_result'));
    const gates = (phase: string) =>
      out.events.filter(
        (e): e is Ev<'gate_result'> => e.type === 'gate_result' && e.phase === phase && e.gate === 'node --test',
      );
    // beta and gamma: farewell passes, legacy fails as on HEAD — excused, green.
    for (const phase of ['arm_2', 'arm_3']) {
      expect(gates(phase)).toEqual([expect.objectContaining({ ok: false, preexisting: true })]);
      expect(gates(phase)[0]!.motif).toContain('legacy parser keeps its quirk');
    }
    const harvest = out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>;
    const ranking = harvest.ranking;
    const arm = (k: number) => ranking.find((r) => r.arm === k)!;
    // Their only gate was excused: nothing verified them. Not green, their own word, and no winner.
    expect([arm(2).green, arm(2).unverified, arm(3).green, arm(3).unverified]).toEqual([false, true, false, true]);
    expect([arm(2).excused, arm(3).excused, arm(2).fixed]).toEqual([['node --test'], ['node --test'], undefined]);
    expect(harvest.winner).toBeUndefined();
    expect(ranking.map((r) => r.arm)).toEqual([2, 3, 1]);
    const file = JSON.parse(fs.readFileSync(harvest.harvestFile, 'utf8')) as {
      winner: unknown;
      apply_command: unknown;
      why: string;
      arms: Array<{ arm: number; verdict: string }>;
    };
    expect([file.winner, file.apply_command]).toEqual([null, null]);
    expect(file.arms.map((a) => [a.arm, a.verdict])).toEqual([
      [2, 'unverified'],
      [3, 'unverified'],
      [1, 'red'],
    ]);
    expect(file.why).toMatch(
      /^no verified arm: nothing to apply unless you name one \(the best ranked, arm_2, is unverified/,
    );
    // The headless log says it where it says OK or green otherwise.
    const log = lines.join('');
    expect(log).toMatch(
      /arm_2 \(agent, attempt 1\/1\): unverified in [\d.]+ s — node --test red on HEAD the same way — nothing verified it/,
    );
    expect(log).toMatch(
      /#1 arm 2 scripted\/beta — unverified \(node --test red on HEAD the same way — nothing verified it\)/,
    );
    expect(log).toContain(
      `no verified arm: nothing applied unless you name one — arm 2 is the best unverified (factory apply ${out.prepared.run.adwId} 2)`,
    );
    expect(log).not.toMatch(/— green/);
    // --apply applied nothing, and said so; the run is not green.
    const applied = out.events.filter((e): e is Ev<'apply'> => e.type === 'apply');
    expect(applied).toEqual([
      expect.objectContaining({
        applied: false,
        line: expect.stringMatching(/^no verified arm to apply: arm 2 is unverified/),
      }),
    ]);
    expect(out.exit).toBe(1);
    expect(treeStatus(bench.dir)).toBe('');
    // factory apply <id> takes no unverified arm unnamed; named, it applies it (the same failure excused) and says so.
    const ws = await openWorkspace({ retries: 2, ui: false, json: false }, { env: bench.env, cwd: bench.dir });
    const id = out.prepared.run.adwId;
    await expect(applyOutput(ws, { adwId: id })).rejects.toThrow(
      `run ${id} has no verified arm: arm 2 is unverified (node --test red on HEAD the same way — nothing verified it); apply it only knowingly: factory apply ${id} 2`,
    );
    const named = await applyOutput(ws, { adwId: id, arm: 2 });
    expect(named.stdout).toMatch(
      /^applied arm 2 \(.*arm-2\.patch\) with git apply --index — unverified: node --test red on HEAD the same way — nothing verified it — review and commit it/,
    );
    expect(named.exit).toBe(0);
    expect(git(bench.dir, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
    git(bench.dir, 'reset', '-q', '--hard');
    // factory show tells the same ranking, in the same words (its outcome lines, from the run's events; this
    // in-process run keeps no run log for the CLI to read).
    const shown = { stdout: outcomeLines(out.events).join('\n') };
    expect(shown.stdout).toMatch(
      /#1 arm 2 scripted\/beta — unverified \(node --test red on HEAD the same way — nothing verified it\)/,
    );
    expect(shown.stdout).toContain(
      `no verified arm: nothing applied unless you name one — arm 2 is the best unverified (factory apply ${id} 2)`,
    );
    // alpha: its farewell fails an assertion HEAD never reached — its own failure.
    expect(gates('arm_1')).toEqual([expect.not.objectContaining({ preexisting: true })]);
    expect(arm(1).green).toBe(false);
    expect(arm(1).motif).toMatch(/says goodbye by name/);
    // The baseline's worktree is gone and the user's tree as it was.
    expect(treeStatus(bench.dir)).toBe('');
  });

  it("in place too, and --json says unverified: the arms' verdicts, the harvest, exit 1", async () => {
    bench = await bonBench(bonTapes(0), { 'test/legacy.test.js': LEGACY });
    const lines: string[] = [];
    const out = await runBon(bench, {
      inPlace: true,
      onPrepared: (p) =>
        p.run.subscribe(
          headlessListener({ stdout: { write: (t: string) => lines.push(t) }, stderr: { write: () => true } }, true),
        ),
    });
    const json = lines
      .join('')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            phase?: string;
            result?: { unverified?: boolean };
            ranking?: Array<{ arm: number; unverified?: boolean; green: boolean }>;
            winner?: number;
            exit?: number;
          },
      );
    expect(json.filter((e) => e.type === 'phase_ok' && e.result?.unverified).map((e) => e.phase)).toEqual([
      'arm_2',
      'arm_3',
    ]);
    const harvest = json.find((e) => e.type === 'harvest')!;
    expect(harvest.ranking!.map((r) => [r.arm, r.green, r.unverified ?? false])).toEqual([
      [2, false, true],
      [3, false, true],
      [1, false, false],
    ]);
    expect(harvest.winner).toBeUndefined();
    expect(json.at(-1)).toMatchObject({ type: 'run_finished', exit: 1 });
    expect(out.exit).toBe(1);
    expect(treeStatus(bench.dir)).toBe('');
  });

  it('an arm that turns a gate red on HEAD green gets the credit in its verdict; a gate green on HEAD gives none', async () => {
    // Two gates: the suite (red on HEAD: farewell.js is missing) and a lint nobody breaks.
    const roster =
      'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\n    - run: node --check src/greet.js\n      timeout: 60\n';
    bench = await bonBench(bonTapes(0), { 'adws/adw_config/factory.config.yaml': roster });
    const out = await runBon(bench);
    const baseline = out.events.find((e): e is Ev<'baseline'> => e.type === 'baseline')!;
    expect(baseline.gates.map((g) => [g.gate, g.ok])).toEqual([
      ['node --test', false],
      ['node --check src/greet.js', true],
    ]);
    const harvest = out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>;
    expect(harvest.ranking.filter((r) => r.green).map((r) => [r.arm, r.fixed])).toEqual([
      [2, ['node --test']],
      [3, ['node --test']],
    ]);
    expect(harvest.winner).toBe(2);
  });

  it('--apply applies the announced winner: the arm that turned a red-on-HEAD gate green, not a cheaper green arm that left it red', async () => {
    const roster =
      'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: node --test\n      timeout: 60\n    - run: node --check src/greet.js\n      timeout: 60\n';
    // beta (the cheapest model) writes a note and leaves the suite red as on HEAD: green by the lint, no credit.
    const notes = {
      status: 'success',
      summary: 'notes',
      artifacts: [],
      notes_for_next_agent: '',
      changed_files: ['NOTES.md'],
    };
    const tapes = {
      ...bonTapes(0),
      'model:beta': [call('write', { path: 'NOTES.md', content: 'a note\n' }), report(notes)],
    };
    bench = await bonBench(tapes, { 'adws/adw_config/factory.config.yaml': roster });
    const out = await runBon(bench, { args: { apply: true } });
    const harvest = out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>;
    const arm = (k: number) => harvest.ranking.find((r) => r.arm === k)!;
    expect([arm(2).green, arm(2).excused, arm(3).fixed]).toEqual([true, ['node --test'], ['node --test']]);
    expect(arm(2).cost).toBeLessThan(arm(3).cost);
    expect(harvest.winner).toBe(3);
    const applied = out.events.filter((e): e is Ev<'apply'> => e.type === 'apply');
    expect(applied).toEqual([expect.objectContaining({ arm: 3, applied: true })]);
    expect(out.exit).toBe(0);
    expect(git(bench.dir, 'status', '--porcelain')).toBe('A  src/farewell.js\n');
    expect(fs.readFileSync(path.join(bench.dir, 'src/farewell.js'), 'utf8')).toContain('Says goodbye.');
  });

  it('a baseline slower than the primer runs beside the arms: they start before it ends, and their gates are judged against it', async () => {
    // On HEAD (FACTORY_ARM=0) the suite is slow; in an arm it is not. The suite is red on HEAD (farewell.js is missing).
    const slow = `bash -c 'if [ "$FACTORY_ARM" = 0 ]; then sleep 5; fi; node --test'`;
    const roster = `gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: ${JSON.stringify(slow)}\n      timeout: 60\n`;
    bench = await bonBench(bonTapes(0), { 'adws/adw_config/factory.config.yaml': roster });
    const out = await runBon(bench);
    expect(out.exit).toBe(0);
    const at = (pred: (e: RunEvent) => boolean) => out.events.findIndex(pred);
    const baseline = at((e) => e.type === 'baseline');
    expect(baseline).toBeGreaterThan(-1);
    // Every arm started while the suite still ran on HEAD, and none was judged before it ended.
    for (const arm of ['arm_1', 'arm_2', 'arm_3'])
      expect({ arm, before: at((e) => e.type === 'phase_started' && e.phase === arm) < baseline }).toEqual({
        arm,
        before: true,
      });
    expect(at((e) => e.type === 'gate_result')).toBeGreaterThan(baseline);
    // Judged against it: the arms that turned the red suite green get the credit.
    const harvest = out.events.find((e) => e.type === 'harvest') as Ev<'harvest'>;
    expect(harvest.ranking.filter((r) => r.green).map((r) => [r.arm, r.fixed])).toEqual([
      [2, [slow]],
      [3, [slow]],
    ]);
    expect(treeStatus(bench.dir)).toBe('');
  });

  it('a gate the baseline finds unable to run once the arms are out stops them: exit 2 with its line, nothing applied, nothing left', async () => {
    // bash is on PATH (no pre-flight can tell); on HEAD the script reaches a program that is not, after the primer's end.
    const broken = `bash -c 'if [ "$FACTORY_ARM" = 0 ]; then sleep 4; pythn -m pytest; fi; node --test'`;
    const roster = `gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: ${JSON.stringify(broken)}\n      timeout: 60\n`;
    bench = await bonBench(bonTapes(800), { 'adws/adw_config/factory.config.yaml': roster });
    const out = await runBon(bench, { args: { apply: true } });
    expect(out.exit).toBe(2);
    expect(out.events.some((e) => e.type === 'phase_started' && e.phase === 'arm_1')).toBe(true);
    expect(out.events.find((e) => e.type === 'race_stop')).toMatchObject({
      kind: 'aborted',
      motif: expect.stringMatching(/cannot run: pythn: command not found/),
    });
    const failed = out.events.find((e): e is Ev<'phase_failed'> => e.type === 'phase_failed' && e.phase === 'harvest');
    expect(failed?.motif).toMatch(/^`bash -c .*` cannot run: pythn: command not found — /);
    expect(out.events.some((e) => e.type === 'apply')).toBe(false);
    expect(treeStatus(bench.dir)).toBe('');
    expect(git(bench.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });
});
