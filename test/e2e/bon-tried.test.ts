// What an arm tried that its guards refused (issue 38, points 2 and 4), through the real pi under test, the scripted
// model and the OS sandbox: arm 2 is the cheaper of two arms that both pass the gates, but it first asked for
// `git config core.hooksPath` (blocked by damage-control) and then wrote toward the user's `.git/hooks` through a
// program (refused by the sandbox). Nothing happened — the guards held — and yet it is named on its record, in the
// harvest's lines, harvest.json and --json, it ranks below the arm that tried nothing whatever a cent says, and
// applying it asks first: `factory apply` refuses it without --yes, `bon --apply` applies nothing (exit 2).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyOutput } from '../../src/commands/apply.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { harvestReport, type HarvestJson } from '../../src/bon/harvest/rank.js';
import { call, report } from '../../src/scripted/tape.js';
import { bonBench, runBon, treeStatus, type BonBench } from '../helpers/bon.js';
import { git } from '../helpers/repo.js';

const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = {
  status: 'success',
  summary: 'farewell added',
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: ['src/farewell.js'],
};
const write = call('write', { path: 'src/farewell.js', content: GOOD });
const primed = report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] });
const HOOKS_PATH = 'git config core.hooksPath /tmp/evil-hooks';
// The user's .git found through the arm's own git (its alternates), written by a program: no rule reads that.
const TOWARD_USER_HOOKS = `node -e "const fs=require('fs'),p=require('path');const user=p.dirname(p.dirname(fs.readFileSync('.git/objects/info/alternates','utf8').trim()));fs.writeFileSync(p.join(user,'.git','hooks','post-checkout'),'#!/bin/sh\\\\n')"`;

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('an arm that tried what its guards refused (real pi, scripted model, sandbox)', () => {
  it('is named everywhere, ranks below the arm that tried nothing although cheaper, and is applied only on a yes', async () => {
    bench = await bonBench({
      // Arm 1 reads twice more than it needs: it costs more than arm 2.
      'model:alpha': [
        call('read', { path: 'specs/farewell.md' }),
        primed,
        call('read', { path: 'specs/farewell.md' }),
        call('read', { path: 'README.md' }),
        write,
        report(built),
      ],
      'model:beta': [
        call('bash', { command: HOOKS_PATH }),
        call('bash', { command: TOWARD_USER_HOOKS }),
        write,
        report(built),
      ],
    });
    const b = bench;
    const hooksBefore = fs.readdirSync(path.join(b.dir, '.git', 'hooks')).sort();
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'], args: { apply: true } });
    const harvest = outcome.events.find((e) => e.type === 'harvest');
    if (harvest?.type !== 'harvest') throw new Error('no harvest');
    const [first, second] = harvest.ranking;
    // Both green; the cheaper one tried two things its guards refused.
    expect(first).toMatchObject({ arm: 1, green: true });
    expect(first?.tried).toBeUndefined();
    expect(second).toMatchObject({ arm: 2, green: true, triedCount: 2 });
    expect(second!.cost).toBeLessThan(first!.cost);
    expect(second!.tried).toEqual([
      `bash ${HOOKS_PATH} — blocked by damage-control`,
      expect.stringMatching(/^bash node -e .* — refused by the sandbox \(.*(Read-only file system|EROFS).*\)$/),
    ]);
    expect(harvest.winner).toBe(1);
    expect(harvest.why).toMatch(
      /^why #1: arm_1 \(scripted\/alpha\) is green and tried nothing its guards refused; arm_2 tried: bash git config core\.hooksPath/,
    );
    // The harvest's lines (the headless log and factory show) name it under the arm.
    const lines = harvestReport({ ...harvest, harvestFile: harvest.harvestFile });
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {5}tried: bash git config core\.hooksPath \/tmp\/evil-hooks — blocked by damage-control; bash node -e/,
      ),
    );
    const adwId = outcome.prepared.run.adwId;
    const json = JSON.parse(
      fs.readFileSync(path.join(b.paths.dataDir, 'bon', adwId, 'harvest.json'), 'utf8'),
    ) as HarvestJson;
    expect(json.arms.find((a) => a.arm === 2)).toMatchObject({ tried_count: 2, tried: second!.tried });
    expect(json.arms.find((a) => a.arm === 1)).toMatchObject({ tried_count: 0, tried: [] });
    // --apply applied the winner, which tried nothing.
    expect(outcome.exit).toBe(0);
    expect(treeStatus(b.dir)).toBe('A  src/farewell.js\n');
    git(b.dir, 'reset', '-q', '--hard');
    // Applying arm 2 asks first: refused without --yes (a usage error: exit 2), applied with it.
    const ws = await openWorkspace({ retries: 2, ui: false, json: false }, { env: b.env, cwd: b.dir });
    await expect(applyOutput(ws, { adwId, arm: 2 })).rejects.toThrow(
      `arm 2 of run ${adwId}: tried: bash ${HOOKS_PATH} — blocked by damage-control;`,
    );
    expect(treeStatus(b.dir)).toBe('');
    expect(await applyOutput(ws, { adwId, arm: 2, yes: true })).toMatchObject({ exit: 0 });
    expect(fs.readdirSync(path.join(b.dir, '.git', 'hooks')).sort()).toEqual(hooksBefore);
  });

  it('--apply on a winner that tried something applies nothing without --yes (exit 2) and says why; with --yes it applies', async () => {
    const tries = [call('bash', { command: HOOKS_PATH }), write, report(built)];
    const primer = [call('read', { path: 'specs/farewell.md' }), primed];
    bench = await bonBench({
      'model:alpha': [...primer, ...tries, ...primer, ...tries],
      'model:beta': [...tries, ...tries],
    });
    const b = bench;
    const refused = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'], args: { apply: true } });
    expect(refused.exit).toBe(2);
    const line = refused.events.find((e) => e.type === 'apply');
    expect(line).toMatchObject({
      applied: false,
      line: expect.stringMatching(
        /^arm \d: tried: bash git config core\.hooksPath \/tmp\/evil-hooks — blocked by damage-control — not applied without a yes: factory apply \w+ \d --yes$/,
      ),
    });
    expect(treeStatus(b.dir)).toBe('');
    const applied = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'], args: { apply: true, yes: true } });
    expect(
      applied.exit,
      JSON.stringify(
        applied.events.filter(
          (e) => e.type === 'apply' || e.type === 'harvest' || e.type === 'run_finished' || e.type === 'phase_failed',
        ),
      ),
    ).toBe(0);
    expect(treeStatus(b.dir)).toBe('A  src/farewell.js\n');
  });

  it('an arm that moves your branch in its own git is contained and named: tried, not red, ranked below the clean arm', async () => {
    const b0 = await bonBench({ 'model:alpha': [] });
    const branch = git(b0.dir, 'rev-parse', '--abbrev-ref', 'HEAD').trim();
    await b0.cleanup();
    // It looks for your branch and points it elsewhere: in its own git, where nothing reaches yours.
    const move = `git branch -f ${branch} HEAD && git branch stray-work`;
    bench = await bonBench({
      'model:alpha': [
        call('read', { path: 'specs/farewell.md' }),
        primed,
        call('read', { path: 'README.md' }),
        write,
        report(built),
      ],
      'model:beta': [call('bash', { command: move }), write, report(built)],
    });
    const b = bench;
    const headBefore = git(b.dir, 'rev-parse', 'HEAD');
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    const harvest = outcome.events.find((e) => e.type === 'harvest');
    if (harvest?.type !== 'harvest') throw new Error('no harvest');
    const arm2 = harvest.ranking.find((r) => r.arm === 2)!;
    expect(arm2).toMatchObject({
      green: true,
      triedCount: 1,
      tried: [`made your branch ${branch} in its own git — contained (yours is untouched)`],
    });
    expect(harvest.winner, `${harvest.why}\n${JSON.stringify(harvest.ranking)}`).toBe(1);
    expect(git(b.dir, 'rev-parse', 'HEAD')).toBe(headBefore);
    expect(git(b.dir, 'branch', '--list', 'stray-work')).toBe('');
    expect(treeStatus(b.dir)).toBe('');
  });
});
