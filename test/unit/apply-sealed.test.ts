// `factory apply <id> [arm]` reads the harvest's one ranking from harvest.json (pure): without an arm named only the
// winner, never an unverified arm; named, an unverified arm is taken and known as such; the baseline read defensively.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyArgs, baselineOf, sealedArm } from '../../src/commands/apply.js';

const DIR = '/r/adws/adw_data/bon/u1';
const entry = (arm: number, verdict: string) => ({
  arm,
  verdict,
  green: verdict === 'green',
  patch_file: path.join(DIR, `arm-${arm}.patch`),
  patch_bytes: 10,
  patch_sha256: 'a'.repeat(64),
  excused: ['node --test'],
});

describe('sealedArm', () => {
  it('without an arm named and no winner, an unverified best arm is named with the command that applies it', () => {
    const harvest = { adw_id: 'u1', winner: null, arms: [entry(2, 'unverified'), entry(1, 'red')] };
    expect(() => sealedArm(DIR, harvest, { adwId: 'u1' })).toThrow(
      'run u1 has no verified arm: arm 2 is unverified (node --test red on HEAD the same way — nothing verified it); apply it only knowingly: factory apply u1 2',
    );
    expect(sealedArm(DIR, harvest, { adwId: 'u1', arm: 2 })).toMatchObject({ arm: 2, green: false, unverified: true });
    expect(() => sealedArm(DIR, { ...harvest, arms: [entry(1, 'red')] }, { adwId: 'u1' })).toThrow(
      'run u1 has no green arm to apply: name one (factory apply u1 <arm>)',
    );
  });

  it('refuses an arm red for any reason unless --force, naming the reason; --force without an arm is refused', () => {
    const act = { ...entry(3, 'red'), failure: 'act', motif: 'it set core.hooksPath in its git' };
    const harvest = { adw_id: 'u1', winner: 2, arms: [entry(2, 'green'), act] };
    expect(() => sealedArm(DIR, harvest, { adwId: 'u1', arm: 3 })).toThrow(
      'arm 3 of run u1 is red (act: it set core.hooksPath in its git): not applied — apply it anyway with factory apply u1 3 --force',
    );
    expect(sealedArm(DIR, harvest, { adwId: 'u1', arm: 3, force: true })).toMatchObject({
      arm: 3,
      green: false,
      unverified: false,
    });
    // A harvest written before the verdict word: not green is red.
    const old = { adw_id: 'u1', winner: 2, arms: [{ ...act, verdict: undefined }] };
    expect(() => sealedArm(DIR, old, { adwId: 'u1', arm: 3 })).toThrow(
      'is red (act: it set core.hooksPath in its git)',
    );
    expect(applyArgs(['u1', '3'], { force: true })).toEqual({ adwId: 'u1', arm: 3, force: true });
    expect(() => applyArgs(['u1'], { force: true })).toThrow(
      '--force applies a red arm only when it is named: factory apply u1 <arm> --force',
    );
  });

  it("takes the harvest's winner, whatever its cost or place", () => {
    const harvest = { adw_id: 'u1', winner: 3, arms: [entry(3, 'green'), entry(2, 'green')] };
    expect(sealedArm(DIR, harvest, { adwId: 'u1' })).toMatchObject({ arm: 3, green: true, unverified: false });
  });
});

describe('baselineOf', () => {
  it('reads the gates red on HEAD, skipping what is malformed', () => {
    const base = baselineOf({
      baseline: [{ gate: 'npm test', ending: 'exited 1', lines: ['✖ x', 3] }, { gate: 1 }, null],
    });
    expect([...base.keys()]).toEqual(['npm test']);
    expect([...base.get('npm test')!.lines]).toEqual(['✖ x']);
    expect(baselineOf({}).size).toBe(0);
    expect(baselineOf(null).size).toBe(0);
  });
});
