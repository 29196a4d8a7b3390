// Ranking and the harvest's lines (pure): green first, then cheapest, then fastest, stable, and the exact texts.
import { describe, expect, it } from 'vitest';
import type { ArmRank } from '../../src/events.js';
import { applyCommand, harvestFile, harvestJson, primerLine, rankArms, whyFirst, winnerOf } from '../../src/bon/rank.js';

function arm(n: number, green: boolean, cost: number, seconds: number, extra: Partial<ArmRank> = {}): ArmRank {
  return { arm: n, phase: `arm_${n}`, green, tokens: 1000 * n, cost, seconds, patchBytes: 100 * n, patchFile: `/r/adws/adw_data/bon/abcd1234/arm-${n}.patch`, ...extra };
}

describe('rankArms', () => {
  it('puts a green arm before a cheaper red one, then orders greens by cost', () => {
    const ranked = rankArms([arm(1, false, 0.001, 5, { motif: 'npm test exited 1' }), arm(2, true, 0.009, 9), arm(3, true, 0.004, 20)]);
    expect(ranked.map((a) => a.arm)).toEqual([3, 2, 1]);
  });

  it('a red arm that never ran a turn (0 tokens) ranks after the red arms that ran, however cheap it looks', () => {
    const noTurn = { ...arm(1, false, 0, 0.1, { motif: 'crashed: pi exited' }), tokens: 0 };
    const ranked = rankArms([noTurn, arm(2, false, 0.009, 9, { motif: 'npm test exited 1' }), arm(3, true, 0.02, 20)]);
    expect(ranked.map((a) => a.arm)).toEqual([3, 2, 1]);
  });

  it('breaks a cost tie by seconds, and keeps run order on a full tie', () => {
    expect(rankArms([arm(1, true, 0.004, 12), arm(2, true, 0.004, 7)]).map((a) => a.arm)).toEqual([2, 1]);
    expect(rankArms([arm(1, true, 0.004, 7), arm(2, true, 0.004, 7), arm(3, true, 0.004, 7)]).map((a) => a.arm)).toEqual([1, 2, 3]);
    expect(rankArms([arm(1, false, 0.002, 7), arm(2, false, 0.001, 7)]).map((a) => a.arm)).toEqual([2, 1]);
  });

  it("among the green, the arm that turned HEAD's red gates green ranks first, however dearer; why #1 says so", () => {
    const ranked = rankArms([arm(1, true, 0.001, 5), arm(2, true, 0.009, 9, { fixed: ['npm test'] }), arm(3, false, 0.001, 2, { fixed: ['npm test'] })]);
    expect(ranked.map((a) => a.arm)).toEqual([2, 1, 3]);
    expect(whyFirst(ranked)).toBe('why #1: arm_2 is green and made green what was red on HEAD (npm test); arm_1 did not (1 red)');
  });

  it('does not reorder its input', () => {
    const arms = [arm(1, false, 1, 1), arm(2, true, 1, 1)];
    rankArms(arms);
    expect(arms.map((a) => a.arm)).toEqual([1, 2]);
  });
});

describe('winnerOf and whyFirst', () => {
  it('names the winner by the first key that separates it from the runner-up', () => {
    const byCost = rankArms([arm(1, false, 0.001, 5), arm(2, true, 0.002, 9), arm(3, true, 0.006, 3)]);
    expect(winnerOf(byCost)?.arm).toBe(2);
    expect(whyFirst(byCost)).toMatch(/^why #1: arm_2 is green and cheapest: \$0\.\d{4} vs \$0\.\d{4} for arm_3 \(-\d+%\)/);
    const byTime = rankArms([arm(1, true, 0.004, 12.5), arm(2, true, 0.004, 7)]);
    expect(whyFirst(byTime)).toMatch(/^why #1: arm_2 is green, as cheap as arm_1 \(\$0\.\d{4}\) and faster: /);
    expect(whyFirst(rankArms([arm(1, true, 0.004, 7), arm(2, true, 0.004, 7)]))).toBe('why #1: arm_1 is green and ties arm_2 on cost and time: first in plan order');
    expect(whyFirst(rankArms([arm(1, false, 0.001, 1), arm(2, true, 0.5, 1), arm(3, false, 0, 1)]))).toBe('why #1: arm_2 is the only green arm (2 red)');
  });

  it('has no winner when every arm is red, and says why', () => {
    const ranked = rankArms([arm(1, false, 0.003, 5, { motif: 'crashed' }), arm(2, false, 0.001, 9, { motif: '`npm test` exited 1' })]);
    expect(winnerOf(ranked)).toBeUndefined();
    expect(whyFirst(ranked)).toBe('no green arm: nothing to apply (the best ranked, arm_2, is red: `npm test` exited 1)');
    expect(whyFirst([])).toBe('no arm ran: nothing to apply');
  });
});

describe('primerLine', () => {
  it('counts what a cold start per arm would have paid again', () => {
    expect(primerLine({ tokens: 12_000, cost: 0.0031 }, 3)).toBe('primer: 12k tokens, $0.0031, paid once — cold it would have been paid 3 times: ~24k more tokens');
    expect(primerLine({ tokens: 800, cost: 0.0004 }, 2)).toBe('primer: 800 tokens, $0.0004, paid once — cold it would have been paid 2 times: ~800 more tokens');
  });
});

describe('applyCommand and harvestJson', () => {
  it('proposes factory apply (the sealed, verified way), never a raw git apply of a file on disk', () => {
    expect(applyCommand('abcd1234')).toBe('factory apply abcd1234');
    expect(applyCommand('abcd1234', 3)).toBe('factory apply abcd1234 3');
  });

  it('writes the ranked arms, the winner, the primer and the proposal', () => {
    const json = harvestJson({
      adwId: 'abcd1234',
      arms: [arm(1, false, 0.001, 5, { motif: 'red', model: 'scripted/a' }), arm(2, true, 0.002, 9)],
      primer: { tokens: 5000, cost: 0.002, sessionId: 's-1' },
      spec: 'specs/f.md',
      head: 'f'.repeat(40),
      now: Date.UTC(2025, 0, 2, 3, 4, 5),
    });
    expect(json).toMatchObject({
      adw_id: 'abcd1234',
      winner: 2,
      why: 'why #1: arm_2 is the only green arm (1 red)',
      apply_command: 'factory apply abcd1234',
      primer: { tokens: 5000, cost_usd: 0.002, session_id: 's-1' },
      created_at: '2025-01-02T03:04:05.000Z',
    });
    expect(json.primer.line).toContain('paid once');
    expect(json.arms.map((a) => [a.rank, a.arm, a.green, a.motif, a.model])).toEqual([
      [1, 2, true, null, null],
      [2, 1, false, 'red', 'scripted/a'],
    ]);
    const none = harvestJson({ adwId: 'x', arms: [arm(1, false, 0, 0)], primer: { tokens: 0, cost: 0 }, now: 0 });
    expect(none.winner).toBeNull();
    expect(none.apply_command).toBeNull();
    expect(harvestFile('/r/adws/adw_data/bon/x')).toBe('/r/adws/adw_data/bon/x/harvest.json');
  });
});
