// Ranking and the harvest's lines (pure): green first, then cheapest, then fastest, stable, and the exact texts.
import { describe, expect, it } from 'vitest';
import type { ArmRank } from '../../src/contract/events.js';
import {
  applyCommand,
  harvestJson,
  harvestReport,
  primerLine,
  rankArms,
  rankHarvest,
  verdictOf,
  whyFirst,
  winnerOf,
} from '../../src/bon/harvest/rank.js';
import { harvestFile } from '../../src/config/paths.js';

function arm(n: number, green: boolean, cost: number, seconds: number, extra: Partial<ArmRank> = {}): ArmRank {
  return {
    arm: n,
    phase: `arm_${n}`,
    green,
    tokens: 1000 * n,
    cost,
    seconds,
    patchBytes: 100 * n,
    patchFile: `/r/adws/adw_data/bon/abcd1234/arm-${n}.patch`,
    ...extra,
  };
}

describe('rankArms', () => {
  it('puts a green arm before a cheaper red one, then orders greens by cost', () => {
    const ranked = rankArms([
      arm(1, false, 0.001, 5, { motif: 'npm test exited 1' }),
      arm(2, true, 0.009, 9),
      arm(3, true, 0.004, 20),
    ]);
    expect(ranked.map((a) => a.arm)).toEqual([3, 2, 1]);
  });

  it('a red arm that never ran a turn (0 tokens) ranks after the red arms that ran, however cheap it looks', () => {
    const noTurn = { ...arm(1, false, 0, 0.1, { motif: 'crashed: pi exited' }), tokens: 0 };
    const ranked = rankArms([noTurn, arm(2, false, 0.009, 9, { motif: 'npm test exited 1' }), arm(3, true, 0.02, 20)]);
    expect(ranked.map((a) => a.arm)).toEqual([3, 2, 1]);
  });

  it('breaks a cost tie by seconds, and keeps run order on a full tie', () => {
    expect(rankArms([arm(1, true, 0.004, 12), arm(2, true, 0.004, 7)]).map((a) => a.arm)).toEqual([2, 1]);
    expect(
      rankArms([arm(1, true, 0.004, 7), arm(2, true, 0.004, 7), arm(3, true, 0.004, 7)]).map((a) => a.arm),
    ).toEqual([1, 2, 3]);
    expect(rankArms([arm(1, false, 0.002, 7), arm(2, false, 0.001, 7)]).map((a) => a.arm)).toEqual([2, 1]);
  });

  it("among the green, the arm that turned HEAD's red gates green ranks first, however dearer; why #1 says so", () => {
    const ranked = rankArms([
      arm(1, true, 0.001, 5),
      arm(2, true, 0.009, 9, { fixed: ['npm test'] }),
      arm(3, false, 0.001, 2, { fixed: ['npm test'] }),
    ]);
    expect(ranked.map((a) => a.arm)).toEqual([2, 1, 3]);
    expect(whyFirst(ranked)).toBe(
      'why #1: arm_2 is green and made green what was red on HEAD (npm test); arm_1 did not (1 red)',
    );
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
    expect(whyFirst(byCost)).toMatch(
      /^why #1: arm_2 is green and cheapest: \$0\.\d{4} vs \$0\.\d{4} for arm_3 \(-\d+%\)/,
    );
    const byTime = rankArms([arm(1, true, 0.004, 12.5), arm(2, true, 0.004, 7)]);
    expect(whyFirst(byTime)).toMatch(/^why #1: arm_2 is green, as cheap as arm_1 \(\$0\.\d{4}\) and faster: /);
    expect(whyFirst(rankArms([arm(1, true, 0.004, 7), arm(2, true, 0.004, 7)]))).toBe(
      'why #1: arm_1 is green and ties arm_2 on cost and time (within 10 %): first in plan order',
    );
  });

  it('lets time decide only between arms that ran under the same load, and past the noise band', () => {
    // Arm 5 waited for a slot and then ran alone: its shorter time is not comparable with the others'.
    const waited = rankArms([arm(1, true, 0.004, 36.7), arm(5, true, 0.004, 14.7, { waited: true })]);
    expect(waited.map((a) => a.arm)).toEqual([1, 5]);
    expect(whyFirst(waited)).toBe(
      'why #1: arm_1 is green and as cheap as arm_5; their times are not comparable (arm_5 waited for a slot): first in plan order',
    );
    // 7.0 s and 7.5 s are the same time on a busy machine; 7 s and 12.5 s are not.
    expect(rankArms([arm(1, true, 0.004, 7.5), arm(2, true, 0.004, 7)]).map((a) => a.arm)).toEqual([1, 2]);
    expect(rankArms([arm(1, true, 0.004, 12.5), arm(2, true, 0.004, 7)]).map((a) => a.arm)).toEqual([2, 1]);
    expect(whyFirst(rankArms([arm(1, false, 0.001, 1), arm(2, true, 0.5, 1), arm(3, false, 0, 1)]))).toBe(
      'why #1: arm_2 is the only green arm (2 red)',
    );
  });

  it('has no winner when every arm is red, and says why', () => {
    const ranked = rankArms([
      arm(1, false, 0.003, 5, { motif: 'crashed' }),
      arm(2, false, 0.001, 9, { motif: '`npm test` exited 1' }),
    ]);
    expect(winnerOf(ranked)).toBeUndefined();
    expect(whyFirst(ranked)).toBe(
      'no green arm: nothing to apply (the best ranked, arm_2, is red: `npm test` exited 1)',
    );
    expect(whyFirst([])).toBe('no arm ran: nothing to apply');
  });
});

describe('primerLine', () => {
  it('counts what a cold start per arm would have paid again', () => {
    expect(primerLine({ tokens: 12_000, cost: 0.0031 }, 3)).toBe(
      'primer: 12k tokens, $0.0031, paid once — cold it would have been paid 3 times: ~24k more tokens',
    );
    expect(primerLine({ tokens: 800, cost: 0.0004 }, 2)).toBe(
      'primer: 800 tokens, $0.0004, paid once — cold it would have been paid 2 times: ~800 more tokens',
    );
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
      ranking: rankHarvest([arm(1, false, 0.001, 5, { motif: 'red', model: 'scripted/a' }), arm(2, true, 0.002, 9)]),
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
    const none = harvestJson({
      adwId: 'x',
      ranking: rankHarvest([arm(1, false, 0, 0)]),
      primer: { tokens: 0, cost: 0 },
      now: 0,
    });
    expect(none.winner).toBeNull();
    expect(none.apply_command).toBeNull();
    expect(harvestFile('/r/adws/adw_data/bon/x')).toBe('/r/adws/adw_data/bon/x/harvest.json');
  });
});

describe('unverified arms (every gate red on HEAD the same way: nothing verified them)', () => {
  const unverified = (n: number, cost: number) =>
    arm(n, false, cost, 5, { unverified: true, excused: ['node --test'] });

  it('is its own verdict word, ranks after every green arm however cheap, before the red, and never wins', () => {
    expect([verdictOf(arm(1, true, 0, 0)), verdictOf(unverified(2, 0)), verdictOf(arm(3, false, 0, 0))]).toEqual([
      'green',
      'unverified',
      'red',
    ]);
    const ranked = rankArms([
      arm(1, false, 0.0001, 1, { motif: 'x' }),
      unverified(2, 0.0001),
      arm(3, true, 0.05, 9),
      unverified(4, 0.0002),
    ]);
    expect(ranked.map((a) => a.arm)).toEqual([3, 2, 4, 1]);
    expect(winnerOf(ranked)?.arm).toBe(3);
    expect(whyFirst(ranked)).toBe('why #1: arm_3 is the only green arm (2 unverified, 1 red)');
    const only = rankHarvest([unverified(1, 0.002), unverified(2, 0.001), arm(3, false, 0.0001, 1, { motif: 'boom' })]);
    expect(only.arms.map((a) => a.arm)).toEqual([2, 1, 3]);
    expect(only.winner).toBeUndefined();
    expect(only.why).toBe(
      'no verified arm: nothing to apply unless you name one (the best ranked, arm_2, is unverified: node --test red on HEAD the same way — nothing verified it)',
    );
  });

  it('harvest.json and the harvest lines say unverified, propose no command, and keep the baseline for factory apply', () => {
    const ranking = rankHarvest([unverified(1, 0.002), unverified(2, 0.001)]);
    const json = harvestJson({
      adwId: 'u1',
      ranking,
      primer: { tokens: 0, cost: 0 },
      now: 0,
      baseline: [{ gate: 'node --test', ending: 'exited 1', lines: ['✖ legacy'] }],
    });
    expect(json.winner).toBeNull();
    expect(json.apply_command).toBeNull();
    expect(json.arms.map((a) => [a.arm, a.verdict, a.green])).toEqual([
      [2, 'unverified', false],
      [1, 'unverified', false],
    ]);
    expect(json.baseline).toEqual([{ gate: 'node --test', ending: 'exited 1', lines: ['✖ legacy'] }]);
    const lines = harvestReport({
      adwId: 'u1',
      ranking: ranking.arms,
      primer: { tokens: 0, cost: 0 },
      harvestFile: '/h.json',
    });
    expect(lines[1]).toContain('#1 arm 2  — unverified (node --test red on HEAD the same way — nothing verified it)');
    expect(lines.at(-1)).toBe(
      'no verified arm: nothing applied unless you name one — arm 2 is the best unverified (factory apply u1 2); see /h.json',
    );
  });

  it("is ranked once: the judge's order and the baseline credit decide the winner, not the cost", () => {
    const judge = {
      ranking: [
        { arm: 3, reason: 'clearer' },
        { arm: 2, reason: 'bare' },
      ],
      tokens: 1,
      cost: 0.001,
    };
    const byJudge = rankHarvest([arm(1, false, 0.0001, 1), arm(2, true, 0.001, 1), arm(3, true, 0.009, 9)], judge);
    expect([byJudge.winner?.arm, byJudge.arms.map((a) => a.arm)]).toEqual([3, [3, 2, 1]]);
    const byCredit = rankHarvest([
      arm(1, true, 0.001, 1, { excused: ['npm test'] }),
      arm(2, true, 0.009, 9, { fixed: ['npm test'] }),
    ]);
    expect(byCredit.winner?.arm).toBe(2);
    expect(harvestJson({ adwId: 'j', ranking: byJudge, primer: { tokens: 0, cost: 0 }, now: 0 }).winner).toBe(3);
  });
});

describe('nothingVerified (armVerdict.ts)', () => {
  it('only when a gate command ran and every one was excused; the declared-files check verifies nothing', async () => {
    const { nothingVerified } = await import('../../src/bon/armVerdict.js');
    const files = { gate: 'changed_files', ok: true };
    expect(nothingVerified([files, { gate: 'npm test', ok: false }], ['npm test'])).toBe(true);
    expect(nothingVerified([files, { gate: 'npm test', ok: false }, { gate: 'lint', ok: true }], ['npm test'])).toBe(
      false,
    );
    expect(nothingVerified([files, { gate: 'npm test', ok: false }], [])).toBe(false);
    expect(nothingVerified([files], [])).toBe(false);
  });
});
