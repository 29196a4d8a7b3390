// Phases that run at once (best-of-N arms): overlapping in time, never more than the limit, a red member leaving
// the others running, a member planned while the group runs joining it, an infrastructure failure stopping the run.
import { describe, expect, it } from 'vitest';
import { InfrastructureError, PhaseFailure } from '../../src/contract/errors.js';
import type { RunEvent } from '../../src/contract/events.js';
import { execute, Run, type Phase } from '../../src/engine/runner.js';

/** A gate the test opens: lets a phase be "running" for as long as the test wants, with no timer. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

function arms(count: number, limit: number, body: (arm: number) => Promise<unknown>, log: string[]): Phase[] {
  return Array.from(
    { length: count },
    (_, i): Phase => ({
      name: `arm_${i + 1}`,
      kind: 'code',
      optional: true,
      arm: i + 1,
      parallel: { group: 'arms', limit },
      async action() {
        log.push(`start ${i + 1}`);
        try {
          return await body(i + 1);
        } finally {
          log.push(`end ${i + 1}`);
        }
      },
    }),
  );
}

describe('a parallel group of phases', () => {
  it('starts members up to the limit at once, the next one as a slot frees, then the phase after the group', async () => {
    const log: string[] = [];
    const gates = [latch(), latch(), latch()];
    const run = new Run('adw_x', '/tmp');
    let live = 0;
    let peak = 0;
    const phases = [
      ...arms(
        3,
        2,
        async (arm) => {
          live += 1;
          peak = Math.max(peak, live);
          await gates[arm - 1]!.opened;
          live -= 1;
          return arm;
        },
        log,
      ),
      { name: 'harvest', kind: 'code' as const, action: () => log.push('harvest') },
    ];
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const done = execute(run, phases);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start 1', 'start 2']); // both at once; the third waits for a slot
    // …and is told so, once, before it starts; the run keeps that it waited.
    expect(
      events.filter((e) => e.type === 'phase_waiting').map((e) => e.type === 'phase_waiting' && [e.phase, e.limit]),
    ).toEqual([['arm_3', 2]]);
    expect([...run.waited]).toEqual(['arm_3']);
    gates[1]!.open();
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['start 1', 'start 2', 'end 2', 'start 3']);
    gates[0]!.open();
    gates[2]!.open();
    expect(await done).toBe(0);
    expect(peak).toBe(2);
    expect(log.at(-1)).toBe('harvest');
    expect(run.results).toMatchObject({ arm_1: 1, arm_2: 2, arm_3: 3 });
  });

  it('a red member leaves the others running; a member planned meanwhile joins the group', async () => {
    const log: string[] = [];
    const run = new Run('adw_x', '/tmp');
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const slow = latch();
    const phases: Phase[] = [
      ...arms(
        2,
        3,
        async (arm) => {
          if (arm === 1) throw new PhaseFailure('arm 1 is red');
          if (arm === 2) {
            // While arm 2 runs, a third arm is planned into the group (the board's `c`).
            phases.splice(2, 0, ...arms(3, 3, async () => 'late', log).slice(2));
            await slow.opened;
          }
          return arm;
        },
        log,
      ),
      { name: 'harvest', kind: 'code', action: () => log.push('harvest') },
    ];
    const done = execute(run, phases);
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toContain('start 3');
    slow.open();
    expect(await done).toBe(0);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({ phase: 'arm_1', motif: 'arm 1 is red' });
    expect(run.results).toMatchObject({ arm_2: 2, arm_3: 'late' });
    expect(log.at(-1)).toBe('harvest');
  });

  it('a member planned while every running member still works starts at once when a slot is free', async () => {
    const log: string[] = [];
    const run = new Run('adw_x', '/tmp');
    const hold = latch();
    const phases: Phase[] = [
      ...arms(2, 3, async () => hold.opened, log),
      { name: 'harvest', kind: 'code', action: () => log.push('harvest') },
    ];
    const done = execute(run, phases);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start 1', 'start 2']);
    // The board's `c`: the phase is spliced in before the harvest, then announced.
    const late = arms(3, 3, async () => 'late', log)[2]!;
    phases.splice(2, 0, late);
    run.emit({
      type: 'phase_planned',
      adwId: run.adwId,
      ts: Date.now(),
      phase: { name: late.name, kind: 'code', attempts: 1 },
      before: 'harvest',
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['start 1', 'start 2', 'start 3', 'end 3']); // while arms 1 and 2 still work
    hold.open();
    expect(await done).toBe(0);
  });

  it('an infrastructure failure starts no one new, lets the running end, and stops the run with exit 2', async () => {
    const log: string[] = [];
    const run = new Run('adw_x', '/tmp');
    const other = latch();
    const phases = [
      ...arms(
        3,
        2,
        async (arm) => {
          if (arm === 1) throw new InfrastructureError('the fork could not start');
          await other.opened;
          return arm;
        },
        log,
      ),
      { name: 'harvest', kind: 'code' as const, action: () => log.push('harvest') },
    ];
    const done = execute(run, phases);
    await new Promise((r) => setTimeout(r, 10));
    other.open();
    expect(await done).toBe(2);
    expect(log).toEqual(['start 1', 'start 2', 'end 1', 'end 2']);
  });
});
