// The node battery: every extension of the factory's pi node loaded together by the real pi under test, in a
// project set up as `factory init` sets one up, each proven active by what it does, at zero tokens. The probes
// live in src/doctor/nodeBattery.ts, because `factory doctor` runs them in an installed cockpit that has no
// test runner; this file asserts the same probes from a checkout, and proves they can go red.
//
//   npx vitest run .pi/tests/battery.test.ts        (exit 0 = the node is sound)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedExtensions, runNodeBattery, type BatteryOutcome } from '../../src/doctor/nodeBattery.js';
import { checkPi, type PiCommand } from '../../src/pi/resolve.js';
import { spawnSupervised } from '../../src/process/supervisor.js';
import { piForTests } from '../../test/helpers/rig.js';
import { FACTORY_ROOT, makePartialFactory } from './helpers/node-rig.js';

const PROBES = [
  'pi',
  'factory-inventory',
  'damage-control',
  'factory-report',
  'factory-obs',
  'factory-guard',
  'factory-context',
  'factory-compact',
];

let pi: PiCommand;
let whole: BatteryOutcome;
let withoutGuard: BatteryOutcome;
const partial = makePartialFactory(['factory-guard', 'factory-compact']);

beforeAll(async () => {
  pi = await piForTests();
  [whole, withoutGuard] = await Promise.all([
    runNodeBattery({ pi, factoryRoot: FACTORY_ROOT, env: process.env }),
    runNodeBattery({ pi, factoryRoot: partial.root, env: process.env }),
  ]);
});

afterAll(() => partial.cleanup());

describe('the node battery (real pi, scripted model)', () => {
  it('probes every extension of the node', () => {
    expect(whole.probes.map((p) => p.name).sort()).toEqual([...PROBES].sort());
    expect(expectedExtensions(FACTORY_ROOT)).toHaveLength(PROBES.length - 1);
  });

  it.each(PROBES)('%s is green', (name) => {
    const found = whole.probes.find((p) => p.name === name);
    expect(found, JSON.stringify(whole.probes)).toMatchObject({ ok: true });
  });

  it('reports the version of the pi that really ran the node', async () => {
    expect(whole.timedOut).toBe(false);
    expect(whole.piVersion).toBe((await checkPi(pi)).version);
  });

  it('goes red, naming what is wrong, when the guard is missing from the node', () => {
    const byName = new Map(withoutGuard.probes.map((p) => [p.name, p]));
    expect(byName.get('factory-inventory')).toMatchObject({ ok: false, detail: 'missing: factory-guard' });
    expect(byName.get('factory-guard')).toMatchObject({ ok: false, detail: 'the call over the limit was not blocked' });
    expect(byName.has('factory-compact')).toBe(false); // an optional extension that is not on disk is not probed
    expect(byName.get('damage-control')?.ok).toBe(true);
  });

  it('a battery out of time ends its own pi processes only, never another child of the cockpit', async () => {
    const bystander = spawnSupervised('sleep', ['30'], { cwd: process.cwd(), env: process.env });
    try {
      const late = await runNodeBattery({ pi, factoryRoot: FACTORY_ROOT, env: process.env, timeoutMs: 300 });
      expect(late.timedOut).toBe(true);
      expect(late.probes.find((p) => p.name === 'pi')).toMatchObject({ ok: false });
      expect(bystander.child.exitCode).toBeNull();
      expect(bystander.child.signalCode).toBeNull();
    } finally {
      await bystander.kill(100);
    }
  });
});
