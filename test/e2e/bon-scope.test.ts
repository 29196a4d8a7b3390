// An arm that changes files beyond the spec's scope (issue 39, point 1), through the real pi under test and the
// scripted model: arm 1 is the cheaper of two green arms but also rewrites README.md, which the spec names nowhere
// and puts out of scope. It is named (`beyond the spec: README.md`) in the harvest's lines and harvest.json, ranks
// below the arm that stayed in scope whatever a cent says, and applying it asks first.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyOutput } from '../../src/commands/apply.js';
import { openWorkspace } from '../../src/commands/workspace.js';
import { harvestReport, type HarvestJson } from '../../src/bon/harvest/rank.js';
import { call, report } from '../../src/scripted/tape.js';
import { bonBench, runBon, SPEC, treeStatus, type BonBench } from '../helpers/bon.js';
import { git } from '../helpers/repo.js';

const GOOD = 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n';
const built = (files: string[]) => ({
  status: 'success',
  summary: 'farewell added',
  artifacts: [],
  notes_for_next_agent: '',
  changed_files: files,
});
const write = call('write', { path: 'src/farewell.js', content: GOOD });
const SPEC_TEXT =
  '# farewell\n\nAdd `src/farewell.js` exporting `farewell(name)` that returns `Goodbye, <name>!`.\nThe test `test/farewell.test.js` must pass (`node --test`).\n\nOut of scope: README.md, any other file.\n';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('an arm that changes files beyond the spec (real pi, scripted model)', () => {
  it('is named, ranks below the arm that stayed in scope although cheaper, and is applied only on a yes', async () => {
    bench = await bonBench(
      {
        'model:alpha': [
          call('read', { path: SPEC }),
          report({ status: 'success', summary: 'Plan: add src/farewell.js.', changed_files: [] }),
          write,
          call('write', { path: 'README.md', content: '# greet\n\nNow with farewells.\n' }),
          report(built(['src/farewell.js', 'README.md'])),
        ],
        // Arm 2 reads four times more than it needs: it costs more than arm 1.
        'model:beta': [
          call('read', { path: SPEC }),
          call('read', { path: 'src/greet.js' }),
          call('read', { path: 'test/greet.test.js' }),
          call('read', { path: 'README.md' }),
          write,
          report(built(['src/farewell.js'])),
        ],
      },
      { [SPEC]: SPEC_TEXT },
    );
    const b = bench;
    const outcome = await runBon(b, { models: ['scripted/alpha', 'scripted/beta'] });
    expect(outcome.exit).toBe(0);
    const harvest = outcome.events.find((e) => e.type === 'harvest');
    if (harvest?.type !== 'harvest') throw new Error('no harvest');
    const [first, second] = harvest.ranking;
    expect(first, `${harvest.why}\n${JSON.stringify(harvest.ranking)}`).toMatchObject({ arm: 2, green: true });
    expect(first?.beyond).toBeUndefined();
    expect(second).toMatchObject({ arm: 1, green: true, beyond: ['README.md'] });
    expect(second!.cost).toBeLessThan(first!.cost);
    expect(harvest.why).toBe(
      "why #1: arm_2 (scripted/beta) is green and stayed in the spec's scope; arm_1 changed files beyond the spec: README.md",
    );
    expect(harvestReport({ ...harvest })).toContainEqual('     beyond the spec: README.md');
    const adwId = outcome.prepared.run.adwId;
    const json = JSON.parse(
      fs.readFileSync(path.join(b.paths.dataDir, 'bon', adwId, 'harvest.json'), 'utf8'),
    ) as HarvestJson;
    expect(json.arms.map((a) => [a.arm, a.beyond_spec])).toEqual([
      [2, []],
      [1, ['README.md']],
    ]);
    const ws = await openWorkspace({ retries: 2, ui: false, json: false }, { env: b.env, cwd: b.dir });
    await expect(applyOutput(ws, { adwId, arm: 1 })).rejects.toThrow(
      `arm 1 of run ${adwId}: beyond the spec: README.md — not applied without a yes: factory apply ${adwId} 1 --yes`,
    );
    expect(treeStatus(b.dir)).toBe('');
    expect(await applyOutput(ws, { adwId, arm: 1, yes: true })).toMatchObject({ exit: 0 });
    expect(treeStatus(b.dir)).toBe('M  README.md\nA  src/farewell.js\n');
    git(b.dir, 'reset', '-q', '--hard');
  });
});
