// An arm's record of what its guards refused (src/bon/harvest/tried.ts), and what the ranking and `factory apply` make of
// it (pure): calls paired with their ends by pi's call id, the first few kept and all counted; an arm that tried
// something ranks below an arm equal on the gates that tried nothing; applying it needs a yes.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sealedArm } from '../../src/commands/apply.js';
import { cautionOf, harvestJson, rankArms, rankHarvest } from '../../src/bon/harvest/rank.js';
import { TRIED_KEPT, TriedLog, triedLine } from '../../src/bon/harvest/tried.js';
import type { ArmRank } from '../../src/contract/events.js';

const BLOCKED = 'Blocked by damage-control: bash command matches deny rule /core\\.hooksPath/';

describe('TriedLog', () => {
  it('names a refused call with the call itself, paired by id even when calls end out of order', () => {
    const log = new TriedLog();
    log.see('arm_1', { kind: 'tool_start', tool: 'bash', detail: 'git config core.hooksPath /x', callId: 'a' });
    log.see('arm_1', { kind: 'tool_start', tool: 'bash', detail: 'ls', callId: 'b' });
    expect(
      log.see('arm_1', { kind: 'tool_end', tool: 'bash', isError: false, detail: 'README.md', callId: 'b' }),
    ).toBeUndefined();
    expect(log.see('arm_1', { kind: 'tool_end', tool: 'bash', isError: true, detail: BLOCKED, callId: 'a' })).toBe(
      'bash git config core.hooksPath /x — blocked by damage-control',
    );
    log.see('arm_1', { kind: 'tool_start', tool: 'write', detail: '../user/.git/hooks/x', callId: 'c' });
    log.see('arm_1', {
      kind: 'tool_end',
      tool: 'write',
      isError: true,
      detail: 'EROFS',
      denied: "EROFS: read-only file system, open '../user/.git/hooks/x'",
      callId: 'c',
    });
    expect(log.of('arm_1')).toEqual({
      count: 2,
      acts: [
        'bash git config core.hooksPath /x — blocked by damage-control',
        "write ../user/.git/hooks/x — refused by the sandbox (EROFS: read-only file system, open '../user/.git/hooks/x')",
      ],
    });
    expect(log.of('arm_2')).toBeUndefined();
    // An error that is not a guard's refusal is not an act.
    log.see('arm_2', { kind: 'tool_start', tool: 'bash', detail: 'npm test', callId: 'd' });
    log.see('arm_2', { kind: 'tool_end', tool: 'bash', isError: true, detail: 'exit 1', callId: 'd' });
    expect(log.of('arm_2')).toBeUndefined();
  });

  it('keeps the first few as lines and counts them all; the line says how many more', () => {
    const log = new TriedLog();
    for (let i = 0; i < TRIED_KEPT + 3; i += 1) {
      log.see('arm_1', { kind: 'tool_start', tool: 'bash', detail: `rm -rf /${i}`, callId: String(i) });
      log.see('arm_1', { kind: 'tool_end', tool: 'bash', isError: true, detail: BLOCKED, callId: String(i) });
    }
    const tried = log.of('arm_1')!;
    expect(tried.acts).toHaveLength(TRIED_KEPT);
    expect(tried.count).toBe(TRIED_KEPT + 3);
    expect(triedLine({ tried: tried.acts, triedCount: tried.count }, 1)).toBe(
      `tried: bash rm -rf /0 — blocked by damage-control (+${TRIED_KEPT + 2} more)`,
    );
    expect(triedLine({})).toBeUndefined();
  });
});

const arm = (n: number, extra: Partial<ArmRank> = {}): ArmRank => ({
  arm: n,
  phase: `arm_${n}`,
  green: true,
  tokens: 100,
  cost: 0.02,
  seconds: 10,
  patchBytes: 40,
  ...extra,
});

describe('the ranking and what an arm tried', () => {
  it('puts an arm that tried something below one equal on the gates that tried nothing, whatever a cent or a second says', () => {
    const cheap = arm(1, {
      cost: 0.01,
      seconds: 2,
      tried: ['bash git config core.hooksPath /x — blocked by damage-control'],
      triedCount: 1,
    });
    const clean = arm(2);
    expect(rankArms([cheap, clean]).map((a) => a.arm)).toEqual([2, 1]);
    const ranking = rankHarvest([cheap, clean]);
    expect(ranking.winner?.arm).toBe(2);
    expect(ranking.why).toBe(
      'why #1: arm_2 is green and tried nothing its guards refused; arm_1 tried: bash git config core.hooksPath /x — blocked by damage-control',
    );
    // The gates still come first: a red arm that tried nothing stays below a green one that tried something.
    expect(rankArms([arm(3, { green: false }), cheap]).map((a) => a.arm)).toEqual([1, 3]);
    const json = harvestJson({ adwId: 'u1', ranking, primer: { tokens: 0, cost: 0 }, now: 0 });
    expect(json.arms.map((a) => [a.arm, a.tried_count, a.tried.length])).toEqual([
      [2, 0, 0],
      [1, 1, 1],
    ]);
  });
});

describe("the ranking and the spec's scope", () => {
  it('puts an arm whose files go beyond the spec below one that stayed in scope, whatever a cent or a second says', () => {
    const wider = arm(1, { cost: 0.01, seconds: 2, beyond: ['CONTRIBUTING.md'] });
    const ranking = rankHarvest([wider, arm(2)]);
    expect(ranking.arms.map((a) => a.arm)).toEqual([2, 1]);
    expect(ranking.why).toBe(
      "why #1: arm_2 is green and stayed in the spec's scope; arm_1 changed files beyond the spec: CONTRIBUTING.md",
    );
    expect(cautionOf(wider)).toBe('beyond the spec: CONTRIBUTING.md');
    expect(cautionOf({ ...wider, tried: ['bash x — blocked by damage-control'], triedCount: 1 })).toBe(
      'beyond the spec: CONTRIBUTING.md; tried: bash x — blocked by damage-control',
    );
    expect(cautionOf(arm(2))).toBeUndefined();
  });
});

describe('factory apply and an arm that tried something', () => {
  const DIR = '/r/adws/adw_data/bon/u1';
  const entry = {
    arm: 2,
    verdict: 'green',
    green: true,
    patch_file: path.join(DIR, 'arm-2.patch'),
    patch_bytes: 10,
    patch_sha256: 'a'.repeat(64),
    tried: ['bash x — blocked by damage-control'],
    tried_count: 1,
  };
  it('needs a yes, named or as the winner', () => {
    const harvest = { adw_id: 'u1', winner: 2, arms: [entry] };
    expect(() => sealedArm(DIR, harvest, { adwId: 'u1' })).toThrow(
      'arm 2 of run u1: tried: bash x — blocked by damage-control — not applied without a yes: factory apply u1 2 --yes',
    );
    expect(sealedArm(DIR, harvest, { adwId: 'u1', yes: true })).toMatchObject({ arm: 2 });
    expect(sealedArm(DIR, harvest, { adwId: 'u1', arm: 2, yes: true })).toMatchObject({ arm: 2 });
  });
});
