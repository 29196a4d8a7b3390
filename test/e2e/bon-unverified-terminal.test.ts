// An unverified best-of-N on the arms board, in a real terminal (tmux), through the built CLI, the real pi under test
// and the scripted model: the only gate is red on HEAD (a legacy test), so the arms that leave it red the same way are
// excused — and nothing verified them. Their cards say `unverified`, no arm is starred the winner, `p` without a
// choice applies nothing, an arm chosen with ←/→ is asked about as unverified and applied on y (said so), and the run exits 1. Needs `npm run build`.
import { afterEach, describe, expect, it } from 'vitest';
import { bonTapes, DEMO_MODELS } from '../../src/commands/demo.js';
import { bonBench, SPEC, treeStatus, type BonBench } from '../helpers/bon.js';
import { FACTORY_BIN } from '../helpers/cli.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

const LEGACY =
  "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('legacy parser keeps its quirk', () => assert.equal('quirk', 'fixed'));\n";

let bench: BonBench | undefined;
let term: TmuxSession | undefined;
afterEach(async () => {
  term?.close();
  term = undefined;
  await bench?.cleanup();
  bench = undefined;
});

describe.skipIf(!hasTmux())('an unverified best-of-N on the arms board', () => {
  it('cards say unverified, no winner; p without a choice applies nothing; a chosen arm is asked about, then applied on y; exit 1', async () => {
    bench = await bonBench(bonTapes(0), { 'test/legacy.test.js': LEGACY });
    term = startTmux([process.execPath, FACTORY_BIN, 'bon', SPEC, '--models', DEMO_MODELS.join(',')], {
      cwd: bench.dir,
      env: bench.rig.env,
      cols: 120,
      rows: 40,
    });
    const board = await term.waitForScreen((s) => s.includes('no verified arm'), 120_000);
    // The cards (two unverified, one red) and the phase tree, where an unverified arm is no ✓.
    expect(board.match(/\? unverified/g)).toHaveLength(2);
    expect(board.match(/unverified: nothing verified it/g)).toHaveLength(2);
    expect(board).toMatch(/\? arm_2 +scripted\/beta/);
    expect(board).toMatch(/↳ unverified: every gate red on HEAD the same way/);
    expect(board).not.toContain('★ winner');
    expect(board).toMatch(
      /no verified arm: nothing to apply unless you name one \(the best ranked, arm_2, is unverified/,
    );
    term.sendKeys('p');
    await term.waitForScreen(
      (s) => s.includes('no verified arm: arm_2 is unverified — choose an arm with ←/→, then p, to apply it anyway'),
      120_000,
    );
    expect(treeStatus(bench.dir)).toBe('');
    // Chosen with → (arm_1 → arm_2), it is asked about as unverified; n keeps the tree, y applies it (its gate
    // fails in the scratch worktree exactly as on HEAD: excused) and the line says it is unverified.
    term.sendKeys('Right');
    term.sendKeys('p');
    await term.waitForScreen(
      (s) => s.includes("apply arm_2's patch (it is unverified)? y applies, n cancels"),
      120_000,
    );
    term.sendKeys('n');
    await term.waitForScreen((s) => s.includes('apply cancelled'), 120_000);
    expect(treeStatus(bench.dir)).toBe('');
    term.sendKeys('p');
    await term.waitForScreen((s) => s.includes("apply arm_2's patch (it is unverified)?"), 120_000);
    term.sendKeys('y');
    await term.waitForScreen((s) => /applied arm 2 \(.*\) with git apply --index — unverifi/.test(s));
    expect(treeStatus(bench.dir)).toBe('A  src/farewell.js\n');
    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(1);
  });
});
