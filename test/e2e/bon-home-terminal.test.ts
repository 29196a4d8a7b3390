// `r` on the home resumes a best-of-N killed mid-arms (issue 12, point 6), in a real terminal (tmux), through the
// built CLI, the real pi under test and the scripted model: the cockpit is SIGKILLed while arm 2 is at work (arms 1
// and 3 done); the home lists the run as interrupted; `r` opens the arms board on that very run, where only arm 2 is
// asked again (a fresh fork of the primer), and the harvest ranks the three. Needs `npm run build`. Opened again once
// finished, the run is its arms board, read-only: enter shows the selected arm's verdict and sealed patch.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killedMidArms, treeStatus, type BonBench } from '../helpers/bon.js';
import { FACTORY_BIN } from '../helpers/cli.js';
import { git, tempDir } from '../helpers/repo.js';
import { hasTmux, startTmux, type TmuxSession } from '../helpers/tmux.js';

let bench: BonBench | undefined;
let term: TmuxSession | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  term?.close();
  term = undefined;
  await bench?.cleanup();
  bench = undefined;
  for (const c of cleanups.splice(0)) c();
});

const selectedLine = (screen: string) => screen.split('\n').find((line) => line.trimStart().startsWith('›'));

describe.skipIf(!hasTmux())('the home resumes a killed best-of-N', () => {
  it('lists it as interrupted; r resumes it on the arms board, only the unfinished arm asked again; opened again, its board reads', async () => {
    const base = tempDir('factory-home-bon-', cleanups);
    const { bench: b, adwId, asked } = await killedMidArms(base);
    bench = b;

    // The terminal gets the rig's environment only (a CI runner's own variables would make the cockpit headless).
    term = startTmux([process.execPath, FACTORY_BIN], {
      cwd: b.dir,
      env: { ...b.rig.env, FACTORY_WORKTREES: base },
      cols: 120,
      rows: 32,
    });
    const list = await term.waitForScreen(
      (s) => s.includes('recent runs') && selectedLine(s)?.includes(adwId) === true,
      120_000,
    );
    expect(selectedLine(list)).toMatch(new RegExp(`${adwId}\\s+adw_bon\\s+■ interrupted`));
    term.sendKeys('r');
    const board = await term.waitForScreen((s) => s.includes('proposal: factory apply'));
    expect(board).toContain(`factory · adw_bon · ${adwId}`);
    expect(board, board).toMatch(/why #1: arm_2/);
    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(0);

    // Only arm 2 was asked again; the others kept their verdicts.
    expect(b.rig.model.requestsFor('model:alpha').length).toBe(asked.alpha);
    expect(b.rig.model.requestsFor('model:gamma').length).toBe(asked.gamma);
    expect(b.rig.model.requestsFor('model:beta').length).toBeGreaterThan(asked.beta);
    const harvest = JSON.parse(fs.readFileSync(path.join(b.paths.dataDir, 'bon', adwId, 'harvest.json'), 'utf8')) as {
      winner: number | null;
      arms: { arm: number; green: boolean }[];
    };
    expect(harvest.winner).toBe(2);
    expect(harvest.arms.map((a) => [a.arm, a.green]).sort()).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    expect(git(b.dir, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(treeStatus(b.dir)).toBe('');

    // Opened again from the home, the finished run is its board, read-only: enter shows the winner's sealed patch.
    term.close();
    term = startTmux([process.execPath, FACTORY_BIN], {
      cwd: b.dir,
      env: { ...b.rig.env, FACTORY_WORKTREES: base },
      cols: 120,
      rows: 32,
    });
    await term.waitForScreen((s) => s.includes('recent runs') && selectedLine(s)?.includes(adwId) === true, 120_000);
    term.sendKeys('Enter');
    const replay = await term.waitForScreen((s) => s.includes('why #1') && s.includes('read-only'));
    expect(replay).toContain('enter diff');
    expect(replay).not.toMatch(/\bp apply/);
    term.sendKeys('Enter');
    const diff = await term.waitForScreen((s) => /arm_\d patch · lines 1–/.test(s));
    expect(diff).toMatch(/# arm_\d on scripted\/\w+ · (green|red)/);
    expect(diff).toContain('diff --git a/');
    term.sendKeys('Escape');
    await term.waitForScreen((s) => s.includes('why #1'));
    term.sendKeys('Escape');
    await term.waitForScreen((s) => s.includes('recent runs'));
    term.sendKeys('q');
    expect(await term.waitForExit()).toBe(0);
  });
});
