// `factory apply <id> [arm]` reads the harvest's one ranking from harvest.json (pure): without an arm named only the
// winner, never an unverified arm; named, an unverified arm is taken and known as such; the baseline read defensively.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselineOf, sealedArm } from '../../src/commands/apply.js';

const DIR = '/r/adws/adw_data/bon/u1';
const entry = (arm: number, verdict: string) => ({ arm, verdict, green: verdict === 'green', patch_file: path.join(DIR, `arm-${arm}.patch`), patch_bytes: 10, patch_sha256: 'a'.repeat(64), excused: ['node --test'] });

describe('sealedArm', () => {
  it('without an arm named and no winner, an unverified best arm is named with the command that applies it', () => {
    const harvest = { adw_id: 'u1', winner: null, arms: [entry(2, 'unverified'), entry(1, 'red')] };
    expect(() => sealedArm(DIR, harvest, { adwId: 'u1' })).toThrow(
      'run u1 has no verified arm: arm 2 is unverified (node --test red on HEAD the same way — nothing verified it); apply it only knowingly: factory apply u1 2',
    );
    expect(sealedArm(DIR, harvest, { adwId: 'u1', arm: 2 })).toMatchObject({ arm: 2, green: false, unverified: true });
    expect(() => sealedArm(DIR, { ...harvest, arms: [entry(1, 'red')] }, { adwId: 'u1' })).toThrow('run u1 has no green arm to apply: name one (factory apply u1 <arm>)');
  });

  it("takes the harvest's winner, whatever its cost or place", () => {
    const harvest = { adw_id: 'u1', winner: 3, arms: [entry(3, 'green'), entry(2, 'green')] };
    expect(sealedArm(DIR, harvest, { adwId: 'u1' })).toMatchObject({ arm: 3, green: true, unverified: false });
  });
});

describe('baselineOf', () => {
  it('reads the gates red on HEAD, skipping what is malformed', () => {
    const base = baselineOf({ baseline: [{ gate: 'npm test', ending: 'exited 1', lines: ['✖ x', 3] }, { gate: 1 }, null] });
    expect([...base.keys()]).toEqual(['npm test']);
    expect([...base.get('npm test')!.lines]).toEqual(['✖ x']);
    expect(baselineOf({}).size).toBe(0);
    expect(baselineOf(null).size).toBe(0);
  });
});
