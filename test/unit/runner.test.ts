import { describe, expect, it } from 'vitest';
import {
  InfrastructureError,
  isInfrastructure,
  isRetryable,
  type FailureKind,
  PhaseFailure,
} from '../../src/contract/errors.js';
import type { RunEvent } from '../../src/contract/events.js';
import { execute, newAdwId, Run, type Phase } from '../../src/engine/runner.js';

function collect(run: Run): RunEvent[] {
  const events: RunEvent[] = [];
  run.subscribe((e) => events.push(e));
  return events;
}

const types = (events: RunEvent[]) =>
  events.map((e) =>
    e.type === 'activity' || e.type === 'usage' ? e.type : `${e.type}${'phase' in e ? `:${e.phase}` : ''}`,
  );

describe('execute', () => {
  it('makes 8-hex run ids', () => {
    expect(newAdwId()).toMatch(/^[0-9a-f]{8}$/);
    expect(new Run('adw_x', '/tmp').adwId).toMatch(/^[0-9a-f]{8}$/);
  });

  it('refuses an empty ADW with exit 1', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    expect(await execute(run, [])).toBe(1);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({ motif: expect.stringMatching(/no phases/) });
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', exit: 1 });
  });

  it('refuses an unknown phase kind, naming it, before running anything', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    let ran = false;
    const phases = [
      { name: 'a', kind: 'code', action: () => (ran = true) },
      { name: 'b', kind: 'robot' as 'code', action: () => 1 },
    ] satisfies Phase[];
    expect(await execute(run, phases)).toBe(1);
    expect(ran).toBe(false);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({
      phase: 'b',
      motif: 'unknown phase kind "robot"',
    });
  });

  it('hands each result to the next phase and goes green', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    const exit = await execute(run, [
      { name: 'one', kind: 'code', action: () => ({ n: 1 }) },
      { name: 'two', kind: 'code', action: (r) => ({ n: (r.results.one as { n: number }).n + 1 }) },
    ]);
    expect(exit).toBe(0);
    expect(run.results.two).toEqual({ n: 2 });
    expect(types(events)).toEqual([
      'run_started',
      'phase_started:one',
      'attempt_started:one',
      'phase_ok:one',
      'phase_started:two',
      'attempt_started:two',
      'phase_ok:two',
      'run_finished',
    ]);
  });

  it('retries an agent phase with the previous motif, and never retries a code phase', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    const seen: (string | undefined)[] = [];
    let codeCalls = 0;
    const exit = await execute(run, [
      {
        name: 'agent',
        kind: 'agent',
        retries: 2,
        action: (r, ctx) => {
          seen.push(ctx.lastMotif);
          r.charge('agent', 10, 0.5);
          if (ctx.attempt < 2) throw new PhaseFailure(`bad answer ${ctx.attempt}`);
          return 'ok';
        },
      },
      {
        name: 'code',
        kind: 'code',
        retries: 5,
        action: () => {
          codeCalls += 1;
          throw new PhaseFailure('deterministic failure');
        },
      },
    ]);
    expect(exit).toBe(1);
    expect(seen).toEqual([undefined, 'bad answer 0', 'bad answer 1']);
    expect(codeCalls).toBe(1);
    const ok = events.find((e) => e.type === 'phase_ok')!;
    expect(ok).toMatchObject({ phase: 'agent', attempt: 3, attempts: 3, tokens: 30, cost: 1.5 });
    const failures = events.filter((e) => e.type === 'attempt_failed');
    expect(failures.map((f) => [f.phase, f.attempt, f.willRetry])).toEqual([
      ['agent', 1, true],
      ['agent', 2, true],
      ['code', 1, false],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', exit: 1, failedPhase: 'code', tokens: 30, cost: 1.5 });
  });

  it('fails a phase at once on an unexpected exception, with its message, without crashing', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    let calls = 0;
    const exit = await execute(run, [
      {
        name: 'agent',
        kind: 'agent',
        retries: 3,
        action: () => {
          calls += 1;
          throw new TypeError('cannot read x of undefined');
        },
      },
    ]);
    expect(exit).toBe(1);
    expect(calls).toBe(1);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({ motif: 'cannot read x of undefined' });
  });

  it('exits 2 when the installation is at fault', async () => {
    const run = new Run('adw_x', '/tmp');
    const exit = await execute(run, [
      {
        name: 'agent',
        kind: 'agent',
        retries: 2,
        action: () => {
          throw new InfrastructureError('pi not found');
        },
      },
    ]);
    expect(exit).toBe(2);
  });

  it('stops with 130 when interrupted, without further attempts or phases', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    let later = false;
    const exit = await execute(run, [
      {
        name: 'agent',
        kind: 'agent',
        retries: 2,
        action: async (r, ctx) => {
          r.abort();
          expect(ctx.signal.aborted).toBe(true);
          throw new PhaseFailure('interrupted by the user');
        },
      },
      { name: 'after', kind: 'code', action: () => (later = true) },
    ]);
    expect(exit).toBe(130);
    expect(later).toBe(false);
    expect(events.filter((e) => e.type === 'attempt_failed')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', exit: 130, interrupted: true, failedPhase: 'agent' });
  });

  it('a judge sends its agent phase back with its motif, in the next attempt, then judges again', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    const motifs: (string | undefined)[] = [];
    let builds = 0;
    const exit = await execute(run, [
      { name: 'check', kind: 'code', action: () => 'checked' },
      {
        name: 'build',
        kind: 'agent',
        retries: 2,
        action: (_r, ctx) => {
          motifs.push(ctx.lastMotif);
          builds += 1;
          return { attempt: ctx.attempt };
        },
      },
      {
        name: 'gates',
        kind: 'code',
        judges: 'build',
        action: (r) => {
          if ((r.results.build as { attempt: number }).attempt < 1)
            throw new PhaseFailure('npm test exited 1: 1 failing');
          return 'green';
        },
      },
    ]);
    expect(exit).toBe(0);
    expect(builds).toBe(2);
    expect(motifs).toEqual([undefined, 'npm test exited 1: 1 failing']);
    expect(events.filter((e) => e.type === 'attempt_failed').map((e) => [e.phase, e.willRetry])).toEqual([
      ['gates', true],
    ]);
    expect(events.filter((e) => e.type === 'phase_ok').map((e) => `${e.phase}:${e.attempt}`)).toEqual([
      'check:1',
      'build:1',
      'build:2',
      'gates:1',
    ]);
  });

  it('a judge fails the run once its agent phase has no attempt left', async () => {
    const run = new Run('adw_x', '/tmp');
    let builds = 0;
    const exit = await execute(run, [
      { name: 'build', kind: 'agent', retries: 1, action: () => (builds += 1) },
      {
        name: 'gates',
        kind: 'code',
        judges: 'build',
        action: () => {
          throw new PhaseFailure('still red');
        },
      },
    ]);
    expect(exit).toBe(1);
    expect(builds).toBe(2);
  });

  it('refuses a judge that names no earlier agent phase', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    expect(await execute(run, [{ name: 'gates', kind: 'code', judges: 'build', action: () => 1 }])).toBe(1);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({
      motif: 'judges "build", which is not an earlier agent phase',
    });
  });

  it('goes on past a failed optional phase, and still stops on infrastructure', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    const seen: string[] = [];
    const exit = await execute(run, [
      {
        name: 'arm_1',
        kind: 'agent',
        optional: true,
        action: () => {
          throw new PhaseFailure('red: a gate failed');
        },
      },
      { name: 'arm_2', kind: 'agent', optional: true, action: () => seen.push('arm_2') },
      { name: 'harvest', kind: 'code', action: () => seen.push('harvest') },
    ]);
    expect(exit).toBe(0);
    expect(seen).toEqual(['arm_2', 'harvest']);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({
      phase: 'arm_1',
      motif: 'red: a gate failed',
    });
    const stopped = new Run('adw_x', '/tmp');
    const exit2 = await execute(stopped, [
      {
        name: 'arm_1',
        kind: 'agent',
        optional: true,
        action: () => {
          throw new InfrastructureError('clone failed');
        },
      },
      { name: 'harvest', kind: 'code', action: () => seen.push('never') },
    ]);
    expect(exit2).toBe(2);
    expect(seen).not.toContain('never');
  });
});

describe('typed failures', () => {
  it('the kind travels on attempt_failed and phase_failed; a retryable kind is retried, a final one is not', async () => {
    const failing = (kind: FailureKind): Phase => ({
      name: 'build',
      kind: 'agent',
      retries: 2,
      action: () => Promise.reject(new PhaseFailure(`failed as ${kind}`, undefined, kind)),
    });

    const retried = new Run('adw_x', '/tmp');
    const a = collect(retried);
    expect(await execute(retried, [failing('verdict')])).toBe(1);
    expect(a.filter((e) => e.type === 'attempt_failed').map((e) => (e as { failure?: string }).failure)).toEqual([
      'verdict',
      'verdict',
      'verdict',
    ]);
    expect(a.find((e) => e.type === 'phase_failed')).toMatchObject({ failure: 'verdict', motif: 'failed as verdict' });

    const final = new Run('adw_x', '/tmp');
    const b = collect(final);
    expect(await execute(final, [failing('guard')])).toBe(1);
    expect(b.filter((e) => e.type === 'attempt_failed')).toMatchObject([{ failure: 'guard', willRetry: false }]);

    const infra = new Run('adw_x', '/tmp');
    const c = collect(infra);
    expect(
      await execute(infra, [
        {
          name: 'build',
          kind: 'agent',
          retries: 2,
          action: () => Promise.reject(new InfrastructureError('pi too old', 'version')),
        },
      ]),
    ).toBe(2);
    expect(c.find((e) => e.type === 'phase_failed')).toMatchObject({ failure: 'version' });
  });

  it('isRetryable and isInfrastructure: the installation fails for good (exit 2), a tripped breaker is final, the rest retries', () => {
    expect(
      ['socle', 'version', 'model_mismatch', 'resume', 'spawn', 'infrastructure'].every(
        (k) => isInfrastructure(k as FailureKind) && !isRetryable(k as FailureKind),
      ),
    ).toBe(true);
    expect(isRetryable('guard')).toBe(false);
    expect(isInfrastructure('guard')).toBe(false);
    for (const k of [
      'verdict',
      'gate',
      'empty',
      'stalled',
      'timeout',
      'crashed',
      'exit',
      'model_error',
      'aborted',
    ] as FailureKind[])
      expect(isRetryable(k)).toBe(true);
  });

  it('a phase plan carries the arm number of an arm phase, and only of one', async () => {
    const run = new Run('adw_x', '/tmp');
    const events = collect(run);
    await execute(run, [
      { name: 'prime', kind: 'code', action: () => 1 },
      { name: 'arm_1', kind: 'code', arm: 1, action: () => 1 },
    ]);
    const started = events.find((e) => e.type === 'run_started') as Extract<RunEvent, { type: 'run_started' }>;
    expect(started.phases).toEqual([
      { name: 'prime', kind: 'code', attempts: 1 },
      { name: 'arm_1', kind: 'code', attempts: 1, arm: 1 },
    ]);
  });
});
