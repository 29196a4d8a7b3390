// The primer only reads: a primer that writes would hand its work to arm 1's patch alone. It is refused, the
// tree is reset, and no arm runs.
import { afterEach, describe, expect, it } from 'vitest';
import { call, report } from '../../src/scripted/tape.js';
import { bonBench, runBon, treeStatus, type BonBench } from '../helpers/bon.js';

let bench: BonBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('best-of-N primer', () => {
  it('is refused when it writes, with the tree reset and no arm run', async () => {
    bench = await bonBench({
      'model:alpha': [
        call('write', { path: 'src/farewell.js', content: 'export const x = 1;\n' }),
        report({ status: 'success', summary: 'plan', changed_files: [] }),
      ],
    });
    const { exit, events } = await runBon(bench, { inPlace: true });
    // The model's failure, not the machine's: exit 1, as the README's table gives a phase that failed for good.
    expect(exit).toBe(1);
    const failed = events.find((e) => e.type === 'phase_failed');
    expect(failed).toMatchObject({
      phase: 'prime',
      failure: 'verdict',
      motif: expect.stringMatching(
        /the primer changed the tree \(src\/farewell\.js\): it must only read; the tree was reset/,
      ),
    });
    expect(events.some((e) => e.type === 'phase_started' && e.phase.startsWith('arm_'))).toBe(false);
    expect(treeStatus(bench.dir)).toBe('');
  });

  it('in a worktree too, said when it is seen: the slow baseline beside it is stopped, not waited for', async () => {
    const roster =
      'gateway: ""\nharness: pi\npayload:\n  dir: .\n  commands:\n    - run: sleep 60 && node --test\n      timeout: 120\n';
    bench = await bonBench(
      {
        'model:alpha': [
          call('write', { path: 'src/farewell.js', content: 'export const x = 1;\n' }),
          report({ status: 'success', summary: 'plan', changed_files: [] }),
        ],
      },
      { 'adws/adw_config/factory.config.yaml': roster },
    );
    const { exit, events } = await runBon(bench);
    expect(exit).toBe(1);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({
      phase: 'prime',
      failure: 'verdict',
      motif: expect.stringMatching(/^the primer changed its tree \(src\/farewell\.js\): it must only read/),
    });
    // The baseline never finished (its 60 s gate was stopped with the primer): no baseline line was waited for.
    expect(events.some((e) => e.type === 'baseline')).toBe(false);
    expect(treeStatus(bench.dir)).toBe('');
  });
});
