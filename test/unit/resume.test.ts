import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import type { LedgerEntry } from '../../src/trace/ledger.js';
import { planResume } from '../../src/engine/resume.js';
import { execute, Run, type Phase } from '../../src/engine/runner.js';

const ID = 'abcd1234';
let t = 0;
const ev = (e: Record<string, unknown>): RunEvent => ({ adwId: ID, ts: (t += 1), ...e }) as unknown as RunEvent;
const started = ev({
  type: 'run_started',
  adwName: 'adw_build',
  cwd: '/repo',
  args: { spec: 'specs/x.md' },
  phases: [
    { name: 'check', kind: 'code', attempts: 1 },
    { name: 'build', kind: 'agent', attempts: 3 },
    { name: 'gates', kind: 'code', attempts: 1 },
  ],
});
const checkOk = [
  ev({ type: 'phase_started', phase: 'check', kind: 'code' }),
  ev({
    type: 'phase_ok',
    phase: 'check',
    kind: 'code',
    attempt: 1,
    attempts: 1,
    seconds: 0.1,
    tokens: 0,
    cost: 0,
    result: { head: 'abc' },
  }),
];
const line = (session: string, phase: string): LedgerEntry => ({
  session_id: session,
  cwd: '/repo',
  model: 'p/m',
  phase,
  adw_id: ID,
  declared_at: '',
});

describe('planResume', () => {
  it('continues a phase cut by a crash in its live session, from the ledger, with what it already cost', () => {
    const events = [
      started,
      ...checkOk,
      ev({ type: 'phase_started', phase: 'build', kind: 'agent' }),
      ev({ type: 'attempt_started', phase: 'build', attempt: 1, attempts: 3, sessionId: 's-1' }),
      ev({ type: 'usage', phase: 'build', tokens: 100, cost: 0.5 }),
      ev({ type: 'usage', phase: 'build', tokens: 250, cost: 1.25 }),
    ];
    const decision = planResume(ID, events, [line('s-1', 'build')]);
    expect(decision.ok).toBe(true);
    if (!decision.ok) return;
    expect(decision.plan).toMatchObject({
      adwName: 'adw_build',
      cwd: '/repo',
      phase: 'build',
      sessionId: 's-1',
      used: 1,
      spent: { tokens: 250, cost: 1.25 },
      args: { spec: 'specs/x.md' },
    });
    expect([...decision.plan.carried.keys()]).toEqual(['check']);
    expect(decision.plan.carried.get('check')!.result).toEqual({ head: 'abc' });
  });

  it('trusts the ledger when the attempt_started event never reached the disk', () => {
    const events = [started, ...checkOk, ev({ type: 'phase_started', phase: 'build', kind: 'agent' })];
    const decision = planResume(ID, events, [line('s-9', 'build'), { ...line('other', 'build'), adw_id: 'ffff0000' }]);
    expect(decision.ok && decision.plan.sessionId).toBe('s-9');
  });

  it('resumes a failed run at its failed phase, and refuses a green run or one without inputs', () => {
    const failed = [
      started,
      ...checkOk,
      ev({ type: 'phase_started', phase: 'build', kind: 'agent' }),
      ev({
        type: 'phase_failed',
        phase: 'build',
        kind: 'agent',
        attempts: 3,
        motif: 'x',
        seconds: 1,
        tokens: 9,
        cost: 0.1,
      }),
      ev({ type: 'run_finished', exit: 1, seconds: 1, tokens: 9, cost: 0.1, failedPhase: 'build' }),
    ];
    const decision = planResume(ID, failed, []);
    expect(decision.ok && [decision.plan.phase, decision.plan.spent.tokens]).toEqual(['build', 9]);
    const green = [...failed.slice(0, 3), ev({ type: 'run_finished', exit: 0, seconds: 1, tokens: 0, cost: 0 })];
    expect(planResume(ID, green, [])).toEqual({ ok: false, motif: `run ${ID} is green: nothing to resume` });
    // Outcome events after the end (the envelope, an apply) do not make a green run look unfinished.
    const withOutcomes = [
      ...green,
      ev({ type: 'envelope', envelope: { status: 'success' } }),
      ev({ type: 'apply', applied: true, line: 'applied' }),
    ];
    expect(planResume(ID, withOutcomes, [])).toEqual({ ok: false, motif: `run ${ID} is green: nothing to resume` });
    expect(planResume(ID, [{ ...started, args: undefined } as RunEvent], [])).toMatchObject({
      ok: false,
      motif: expect.stringMatching(/no inputs/),
    });
    expect(planResume(ID, [], [])).toMatchObject({ ok: false });
  });
});

describe('execute with a resume plan', () => {
  it('books the carried phases, continues the resumed one with the continuation ask, and runs the rest', async () => {
    const run = new Run('adw_build', '/repo', ID);
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const calls: string[] = [];
    const phases: Phase[] = [
      { name: 'check', kind: 'code', action: () => calls.push('check') },
      {
        name: 'build',
        kind: 'agent',
        retries: 2,
        action: (_r, ctx) => calls.push(`build:${ctx.attempt}:${ctx.continuation ?? ctx.lastMotif ?? 'ask'}`),
      },
      {
        name: 'gates',
        kind: 'code',
        judges: 'build',
        action: (r) => calls.push(`gates saw ${JSON.stringify(r.results.check)}`),
      },
    ];
    const carried = new Map([
      ['check', { seconds: 0.1, tokens: 5, cost: 0.25, attempt: 1, attempts: 1, result: { head: 'abc' } }],
    ]);
    const exit = await execute(run, phases, { carried, phase: 'build', continuation: 'go on' });
    expect(exit).toBe(0);
    expect(calls).toEqual(['build:0:go on', 'gates saw {"head":"abc"}']);
    expect(run.tokens).toBe(5);
    expect(events.find((e) => e.type === 'phase_ok' && e.phase === 'check')).toMatchObject({
      tokens: 5,
      result: { head: 'abc' },
    });
  });
});
