import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import {
  TAIL_LIMIT,
  createRunStore,
  currentPhaseOf,
  elapsedSeconds,
  initialRunState,
  isLive,
  phaseSeconds,
  reduceRun,
  sumPhases,
  type RunState,
} from '../../state/run/store.js';

const ADW = 'a1b2c3d4';
const T0 = 1_700_000_000_000;

type Payload<T extends RunEvent['type']> = Omit<Extract<RunEvent, { type: T }>, 'type' | 'adwId' | 'ts'>;

/** Build an event of this run at T0 + `at` ms. */
function ev<T extends RunEvent['type']>(type: T, at: number, payload: Payload<T>): RunEvent {
  return { type, adwId: ADW, ts: T0 + at, ...payload } as unknown as RunEvent;
}

function fold(events: RunEvent[], state: RunState = initialRunState()): RunState {
  return events.reduce(reduceRun, state);
}

const started = ev('run_started', 0, {
  adwName: 'adw_prompt',
  cwd: '/home/dev/payload',
  phases: [
    { name: 'prompt', kind: 'agent', attempts: 3 },
    { name: 'dispose', kind: 'code', attempts: 1 },
  ],
});

function phase(state: RunState, name: string) {
  const found = state.phases.find((p) => p.name === name);
  if (!found) throw new Error(`no phase ${name}`);
  return found;
}

describe('reduceRun', () => {
  it('run_started lays out every planned phase as pending, in plan order, with zero totals', () => {
    const state = fold([started]);
    expect(state.adwId).toBe(ADW);
    expect(state.adwName).toBe('adw_prompt');
    expect(state.cwd).toBe('/home/dev/payload');
    expect(state.phases.map((p) => [p.name, p.kind, p.status, p.attempts])).toEqual([
      ['prompt', 'agent', 'pending', 3],
      ['dispose', 'code', 'pending', 1],
    ]);
    expect(state.totals).toEqual({ tokens: 0, cost: 0, startedAt: T0 });
    expect(state.exit).toBeUndefined();
    expect(state.interrupted).toBe(false);
  });

  it('phase_started and attempt_started mark the phase running with its session and model', () => {
    const state = fold([
      started,
      ev('phase_started', 10, { phase: 'prompt', kind: 'agent' }),
      ev('attempt_started', 11, { phase: 'prompt', attempt: 1, attempts: 3, sessionId: 's-1', model: 'scripted/m' }),
    ]);
    const prompt = phase(state, 'prompt');
    expect(prompt).toMatchObject({
      status: 'running',
      attempt: 1,
      attempts: 3,
      startedAt: T0 + 10,
      sessionId: 's-1',
      model: 'scripted/m',
    });
    expect(state.currentPhase).toBe('prompt');
    expect(currentPhaseOf(state)?.name).toBe('prompt');
    expect(phase(state, 'dispose').status).toBe('pending');
  });

  it('activity is kept per phase, newest last, bounded to the last TAIL_LIMIT items', () => {
    const events: RunEvent[] = [started, ev('phase_started', 1, { phase: 'prompt', kind: 'agent' })];
    for (let i = 0; i < TAIL_LIMIT + 10; i++) {
      events.push(
        ev('activity', 2 + i, { phase: 'prompt', activity: { kind: 'tool_start', tool: 'read', detail: `file-${i}` } }),
      );
    }
    const state = fold(events);
    const details = phase(state, 'prompt').activity.map((entry) =>
      entry.item.kind === 'tool_start' ? entry.item.detail : '',
    );
    expect(details).toHaveLength(TAIL_LIMIT);
    expect(details[0]).toBe('file-10');
    expect(details.at(-1)).toBe(`file-${TAIL_LIMIT + 9}`);
    expect(phase(state, 'dispose').activity).toEqual([]);
  });

  it('usage shows the live attempt in the phase and in the totals', () => {
    const state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('attempt_started', 1, { phase: 'prompt', attempt: 1, attempts: 3 }),
      ev('usage', 2, { phase: 'prompt', tokens: 500, cost: 0.0015 }),
      ev('usage', 3, { phase: 'prompt', tokens: 1200, cost: 0.0036 }),
    ]);
    expect(phase(state, 'prompt')).toMatchObject({ tokens: 1200, cost: 0.0036 });
    expect(state.totals.tokens).toBe(1200);
    expect(state.totals.cost).toBeCloseTo(0.0036, 12);
  });

  it('attempt_failed with a retry ahead: retrying, next attempt number, motif kept, usage settled', () => {
    const state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('attempt_started', 1, { phase: 'prompt', attempt: 1, attempts: 3 }),
      ev('usage', 2, { phase: 'prompt', tokens: 1000, cost: 0.003 }),
      ev('attempt_failed', 3, {
        phase: 'prompt',
        attempt: 1,
        attempts: 3,
        motif: 'no JSON object in the answer',
        willRetry: true,
      }),
    ]);
    const prompt = phase(state, 'prompt');
    expect(prompt).toMatchObject({
      status: 'retrying',
      attempt: 2,
      motif: 'no JSON object in the answer',
      motifAttempt: 1,
      settledTokens: 1000,
      tokens: 1000,
    });
    expect(prompt.activity.at(-1)?.item).toEqual({
      kind: 'attempt_failed',
      attempt: 1,
      attempts: 3,
      motif: 'no JSON object in the answer',
      willRetry: true,
    });
    expect(state.totals.tokens).toBe(1000);
  });

  it('a retry adds its live usage on top of the failed attempts, and phase_ok never counts twice', () => {
    let state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('attempt_started', 1, { phase: 'prompt', attempt: 1, attempts: 3 }),
      ev('usage', 2, { phase: 'prompt', tokens: 1000, cost: 0.003 }),
      ev('attempt_failed', 3, { phase: 'prompt', attempt: 1, attempts: 3, motif: 'no JSON', willRetry: true }),
      ev('attempt_started', 4, { phase: 'prompt', attempt: 2, attempts: 3 }),
    ]);
    // The new attempt has spent nothing yet.
    expect(phase(state, 'prompt')).toMatchObject({ status: 'running', attempt: 2, tokens: 1000 });
    state = fold([ev('usage', 5, { phase: 'prompt', tokens: 400, cost: 0.0012 })], state);
    expect(state.totals.tokens).toBe(1400);
    expect(state.totals.cost).toBeCloseTo(0.0042, 12);

    state = fold(
      [
        ev('phase_ok', 6, {
          phase: 'prompt',
          kind: 'agent',
          attempt: 2,
          attempts: 3,
          seconds: 4.2,
          tokens: 1400,
          cost: 0.0042,
          sessionId: 's-1',
        }),
        // A late usage line of the finished attempt must not move anything.
        ev('usage', 7, { phase: 'prompt', tokens: 400, cost: 0.0012 }),
      ],
      state,
    );
    expect(phase(state, 'prompt')).toMatchObject({
      status: 'ok',
      attempt: 2,
      seconds: 4.2,
      tokens: 1400,
      cost: 0.0042,
      sessionId: 's-1',
    });
    expect(state.totals.tokens).toBe(1400);
    expect(state.totals.cost).toBeCloseTo(0.0042, 12);

    state = fold(
      [
        ev('phase_started', 8, { phase: 'dispose', kind: 'code' }),
        ev('phase_ok', 9, {
          phase: 'dispose',
          kind: 'code',
          attempt: 1,
          attempts: 1,
          seconds: 0.1,
          tokens: 0,
          cost: 0,
        }),
      ],
      state,
    );
    expect(state.totals.tokens).toBe(1400);
    expect(sumPhases(state.phases).tokens).toBe(1400);
  });

  it('totals are the exact sum of the phases, however many', () => {
    const plan = Array.from({ length: 5 }, (_, i) => ({ name: `p${i}`, kind: 'agent' as const, attempts: 1 }));
    const events: RunEvent[] = [ev('run_started', 0, { adwName: 'adw_build', cwd: '/w', phases: plan })];
    plan.forEach((p, i) => {
      events.push(ev('phase_started', i * 10 + 1, { phase: p.name, kind: 'agent' }));
      events.push(ev('usage', i * 10 + 2, { phase: p.name, tokens: 999 + i, cost: 0.0001 * (i + 1) }));
      events.push(
        ev('phase_ok', i * 10 + 3, {
          phase: p.name,
          kind: 'agent',
          attempt: 1,
          attempts: 1,
          seconds: 1,
          tokens: 1000 + i,
          cost: 0.0002 * (i + 1),
        }),
      );
    });
    const state = fold(events);
    expect(state.totals.tokens).toBe(1000 + 1001 + 1002 + 1003 + 1004);
    expect(state.totals.cost).toBeCloseTo(0.0002 * 15, 12);
  });

  it('phase_failed records the final motif and figures', () => {
    const state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('attempt_failed', 2, {
        phase: 'prompt',
        attempt: 3,
        attempts: 3,
        motif: 'status: array expected',
        willRetry: false,
      }),
      ev('phase_failed', 3, {
        phase: 'prompt',
        kind: 'agent',
        attempts: 3,
        motif: 'status: array expected',
        seconds: 9.5,
        tokens: 3100,
        cost: 0.0093,
      }),
    ]);
    expect(phase(state, 'prompt')).toMatchObject({
      status: 'failed',
      attempt: 3,
      motif: 'status: array expected',
      motifAttempt: undefined,
      seconds: 9.5,
      tokens: 3100,
    });
    expect(state.totals.tokens).toBe(3100);
  });

  it('run_finished: never-started phases become skipped, totals and exit come from the core', () => {
    const state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('phase_failed', 3, {
        phase: 'prompt',
        kind: 'agent',
        attempts: 3,
        motif: 'boom',
        seconds: 2,
        tokens: 10,
        cost: 0.001,
      }),
      ev('run_finished', 4, { exit: 1, seconds: 2.5, tokens: 10, cost: 0.001, failedPhase: 'prompt' }),
    ]);
    expect(state.phases.map((p) => p.status)).toEqual(['failed', 'skipped']);
    expect(state).toMatchObject({ exit: 1, failedPhase: 'prompt', interrupted: false });
    expect(state.totals).toEqual({ tokens: 10, cost: 0.001, startedAt: T0, finishedAt: T0 + 4, seconds: 2.5 });
  });

  it('an interrupted run fails the phase that was live and clears pending key requests', () => {
    let state = fold([
      started,
      ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }),
      ev('usage', 2, { phase: 'prompt', tokens: 300, cost: 0.0009 }),
    ]);
    state = { ...state, ui: { ...state.ui, abortRequested: true, statusLine: 'aborting' } };
    state = fold(
      [ev('run_finished', 5, { exit: 130, seconds: 0.5, tokens: 300, cost: 0.0009, interrupted: true })],
      state,
    );
    expect(phase(state, 'prompt')).toMatchObject({ status: 'failed', motif: 'interrupted', finishedAt: T0 + 5 });
    expect(phase(state, 'dispose').status).toBe('skipped');
    expect(state.interrupted).toBe(true);
    expect(state.exit).toBe(130);
    expect(state.ui.abortRequested).toBe(false);
    // Events after the end do not reopen totals.
    state = fold([ev('usage', 6, { phase: 'prompt', tokens: 9999, cost: 1 })], state);
    expect(state.totals.tokens).toBe(300);
  });

  it('ignores events of another run, and adds a phase the plan did not list', () => {
    const foreign = { ...ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }), adwId: 'ffffffff' } as RunEvent;
    let state = fold([started, foreign]);
    expect(phase(state, 'prompt').status).toBe('pending');
    state = fold([ev('phase_started', 2, { phase: 'extra', kind: 'code' })], state);
    expect(state.phases.map((p) => p.name)).toEqual(['prompt', 'dispose', 'extra']);
    expect(phase(state, 'extra')).toMatchObject({ kind: 'code', status: 'running' });
  });

  it('is pure: the previous state is never mutated', () => {
    const before = fold([started, ev('phase_started', 1, { phase: 'prompt', kind: 'agent' })]);
    const snapshot = structuredClone(before);
    fold(
      [
        ev('activity', 2, { phase: 'prompt', activity: { kind: 'text', text: 'hello' } }),
        ev('usage', 3, { phase: 'prompt', tokens: 5, cost: 0.1 }),
        ev('attempt_failed', 4, { phase: 'prompt', attempt: 1, attempts: 3, motif: 'm', willRetry: true }),
        ev('run_finished', 5, { exit: 1, seconds: 1, tokens: 5, cost: 0.1 }),
      ],
      before,
    );
    expect(before).toEqual(snapshot);
  });
});

describe('createRunStore', () => {
  it('apply folds events, keeps its actions across run_started, and notifies subscribers', () => {
    const store = createRunStore();
    const seen: string[] = [];
    store.subscribe((state) => seen.push(state.phases.map((p) => p.status).join(',')));
    store.getState().apply(started);
    store.getState().apply(ev('phase_started', 1, { phase: 'prompt', kind: 'agent' }));
    expect(seen).toEqual(['pending,pending', 'running,pending']);
    expect(typeof store.getState().apply).toBe('function');
    store.getState().setUi({ statusLine: 'hello' });
    expect(store.getState().ui).toMatchObject({ statusLine: 'hello', abortRequested: false });
    // A new run resets the UI state too.
    store.getState().apply({ ...started, adwId: 'deadbeef' } as RunEvent);
    expect(store.getState().adwId).toBe('deadbeef');
    expect(store.getState().ui.statusLine).toBeUndefined();
  });
});

describe('a finished run on screen', () => {
  const green = [
    started,
    ev('phase_started', 10, { phase: 'prompt', kind: 'agent' }),
    ev('attempt_started', 11, { phase: 'prompt', attempt: 1, attempts: 3 }),
    ev('activity', 20, { phase: 'prompt', activity: { kind: 'tool_start', tool: 'bash', detail: 'git ls-files' } }),
    ev('phase_ok', 30, {
      phase: 'prompt',
      kind: 'agent',
      attempt: 1,
      attempts: 3,
      seconds: 0.02,
      tokens: 10,
      cost: 0.001,
    }),
    ev('phase_started', 31, { phase: 'dispose', kind: 'code' }),
    ev('phase_ok', 32, { phase: 'dispose', kind: 'code', attempt: 1, attempts: 1, seconds: 0, tokens: 0, cost: 0 }),
    ev('run_finished', 33, { exit: 0, seconds: 0.033, tokens: 10, cost: 0.001 }),
  ];

  it('shows the activity of the last phase that had some, not an empty code phase', () => {
    expect(currentPhaseOf(fold(green))?.name).toBe('prompt');
    // While it runs, the tail follows the running phase.
    expect(currentPhaseOf(fold(green.slice(0, 6)))?.name).toBe('dispose');
  });

  it('drops the "aborting…" status line once the run is over', () => {
    const aborting = fold(green.slice(0, 3));
    const withStatus = {
      ...aborting,
      ui: { ...aborting.ui, abortRequested: true, statusLine: 'aborting the running turn…' },
    };
    const done = reduceRun(
      withStatus,
      ev('run_finished', 40, {
        exit: 130,
        seconds: 0.04,
        tokens: 0,
        cost: 0,
        interrupted: true,
        failedPhase: 'prompt',
      }),
    );
    expect(done.ui.statusLine).toBeUndefined();
    expect(currentPhaseOf(done)?.name).toBe('prompt');
  });
});

describe('gates and a build sent back by them', () => {
  const buildStarted = ev('run_started', 0, {
    adwName: 'adw_build',
    cwd: '/home/dev/payload',
    phases: [
      { name: 'check', kind: 'code', attempts: 1 },
      { name: 'build', kind: 'agent', attempts: 3 },
      { name: 'gates', kind: 'code', attempts: 1 },
    ],
  });
  const MOTIF = 'npm test exited 1: FAIL test/sum.test.js expected 3, received 4';
  // The runner's sequence when the gates are red once: gates fail with willRetry (no attempt of their own
  // left), the build starts again on its attempt 2, then the gates run again.
  const firstRound = [
    buildStarted,
    ev('phase_started', 1, { phase: 'check', kind: 'code' }),
    ev('attempt_started', 1, { phase: 'check', attempt: 1, attempts: 1 }),
    ev('phase_ok', 2, { phase: 'check', kind: 'code', attempt: 1, attempts: 1, seconds: 0.001, tokens: 0, cost: 0 }),
    ev('phase_started', 3, { phase: 'build', kind: 'agent' }),
    ev('attempt_started', 3, { phase: 'build', attempt: 1, attempts: 3, sessionId: 's-build' }),
    ev('usage', 4000, { phase: 'build', tokens: 1000, cost: 0.01 }),
    ev('phase_ok', 5003, {
      phase: 'build',
      kind: 'agent',
      attempt: 1,
      attempts: 3,
      seconds: 5,
      tokens: 1000,
      cost: 0.01,
      sessionId: 's-build',
    }),
    ev('phase_started', 5004, { phase: 'gates', kind: 'code' }),
    ev('attempt_started', 5004, { phase: 'gates', attempt: 1, attempts: 1 }),
    ev('gate_result', 5010, { phase: 'gates', gate: 'changed files', ok: true, seconds: 0.006 }),
    ev('gate_result', 6504, { phase: 'gates', gate: 'npm test', ok: false, motif: MOTIF, seconds: 1.5 }),
    ev('attempt_failed', 6504, { phase: 'gates', attempt: 1, attempts: 1, motif: MOTIF, willRetry: true }),
  ];

  it('gate_result events build the phase gate list, in report order', () => {
    const state = fold(firstRound.slice(0, 12));
    expect(phase(state, 'gates').gates).toEqual([
      { gate: 'changed files', ok: true, seconds: 0.006 },
      { gate: 'npm test', ok: false, motif: MOTIF, seconds: 1.5 },
    ]);
    expect(phase(state, 'build').gates).toEqual([]);
  });

  it('red gates wait as retrying with their motif, their clock stopped, while the build is ok', () => {
    const state = fold(firstRound);
    expect(phase(state, 'gates')).toMatchObject({
      status: 'retrying',
      sentBack: true,
      motif: MOTIF,
      attempt: 1,
      seconds: 1.5,
      finishedAt: T0 + 6504,
    });
    expect(phase(state, 'build')).toMatchObject({ status: 'ok', attempt: 1, seconds: 5 });
  });

  it('the build runs again on attempt 2/3 in its session, its figures and clock going on from the first run', () => {
    const state = fold([
      ...firstRound,
      ev('phase_started', 6505, { phase: 'build', kind: 'agent' }),
      ev('attempt_started', 6505, { phase: 'build', attempt: 2, attempts: 3, sessionId: 's-build' }),
      ev('usage', 7000, { phase: 'build', tokens: 400, cost: 0.004 }),
    ]);
    const build = phase(state, 'build');
    expect(build).toMatchObject({
      status: 'running',
      attempt: 2,
      attempts: 3,
      sessionId: 's-build',
      tokens: 1400,
      earlierSeconds: 5,
      startedAt: T0 + 6505,
    });
    expect(build.seconds).toBeUndefined();
    expect(build.finishedAt).toBeUndefined();
    expect(state.currentPhase).toBe('build');
    // The gates still wait, ↻ with their verdict, until they run again.
    expect(phase(state, 'gates')).toMatchObject({ status: 'retrying', sentBack: true, motif: MOTIF });
    expect(phase(state, 'gates').gates).toHaveLength(2);
    expect(state.totals.tokens).toBe(1400);
  });

  it('the gates run again with a fresh list and no stale motif; the run ends green', () => {
    const state = fold([
      ...firstRound,
      ev('phase_started', 6505, { phase: 'build', kind: 'agent' }),
      ev('attempt_started', 6505, { phase: 'build', attempt: 2, attempts: 3, sessionId: 's-build' }),
      ev('phase_ok', 9505, {
        phase: 'build',
        kind: 'agent',
        attempt: 2,
        attempts: 3,
        seconds: 3,
        tokens: 1400,
        cost: 0.014,
        sessionId: 's-build',
      }),
      ev('phase_started', 9506, { phase: 'gates', kind: 'code' }),
      ev('attempt_started', 9506, { phase: 'gates', attempt: 1, attempts: 1 }),
    ]);
    expect(phase(state, 'build')).toMatchObject({ status: 'ok', attempt: 2, seconds: 8, tokens: 1400 });
    const gates = phase(state, 'gates');
    expect(gates).toMatchObject({ status: 'running', sentBack: false, gates: [], earlierSeconds: 1.5 });
    expect(gates.motif).toBeUndefined();
    const done = fold(
      [
        ev('gate_result', 9510, { phase: 'gates', gate: 'changed files', ok: true, seconds: 0.004 }),
        ev('gate_result', 11_006, { phase: 'gates', gate: 'npm test', ok: true, seconds: 1.5 }),
        ev('phase_ok', 11_006, {
          phase: 'gates',
          kind: 'code',
          attempt: 1,
          attempts: 1,
          seconds: 1.5,
          tokens: 0,
          cost: 0,
        }),
        ev('run_finished', 11_010, { exit: 0, seconds: 11.01, tokens: 1400, cost: 0.014 }),
      ],
      state,
    );
    expect(phase(done, 'gates')).toMatchObject({
      status: 'ok',
      seconds: 3,
      gates: [
        { gate: 'changed files', ok: true },
        { gate: 'npm test', ok: true },
      ],
    });
    expect(done.phases.map((p) => p.status)).toEqual(['ok', 'ok', 'ok']);
  });

  it('when the build then fails for good, the waiting gates keep their red verdict, not "interrupted"', () => {
    const state = fold([
      ...firstRound,
      ev('phase_started', 6505, { phase: 'build', kind: 'agent' }),
      ev('attempt_started', 6505, { phase: 'build', attempt: 2, attempts: 3 }),
      ev('phase_failed', 7000, {
        phase: 'build',
        kind: 'agent',
        attempts: 3,
        motif: 'interrupted by the user',
        seconds: 0.5,
        tokens: 1000,
        cost: 0.01,
      }),
      ev('run_finished', 7001, {
        exit: 130,
        seconds: 7,
        tokens: 1000,
        cost: 0.01,
        failedPhase: 'build',
        interrupted: true,
      }),
    ]);
    expect(phase(state, 'gates')).toMatchObject({ status: 'failed', sentBack: false, motif: MOTIF });
    expect(phase(state, 'build')).toMatchObject({ status: 'failed', seconds: 5.5 });
  });

  it('a gate reported twice (a replay that repeats it) keeps one chip, the last verdict', () => {
    const state = fold([
      ...firstRound.slice(0, 12),
      ev('gate_result', 6600, { phase: 'gates', gate: 'npm test', ok: true, seconds: 1.2 }),
    ]);
    expect(phase(state, 'gates').gates?.map((g) => [g.gate, g.ok])).toEqual([
      ['changed files', true],
      ['npm test', true],
    ]);
  });
});

describe('planned models', () => {
  it('a phase planned on a model shows it before it starts (a best-of-N arm), and an added phase too', () => {
    const planned = ev('run_started', 0, {
      adwName: 'adw_bon',
      cwd: '/r',
      phases: [
        { name: 'prime', kind: 'agent', attempts: 1 },
        { name: 'arm_1', kind: 'agent', attempts: 1, model: 'scripted/beta' },
        { name: 'harvest', kind: 'code', attempts: 1 },
      ],
    });
    const added = ev('phase_planned', 5, {
      phase: { name: 'arm_2', kind: 'agent', attempts: 1, model: 'scripted/gamma' },
      before: 'harvest',
    });
    const state = fold([planned, added]);
    expect(phase(state, 'arm_1').model).toBe('scripted/beta');
    expect(phase(state, 'arm_2').model).toBe('scripted/gamma');
    expect(phase(state, 'prime').model).toBeUndefined();
  });
});

describe('run selectors: the clocks and liveness the views draw', () => {
  const prompt = (events: RunEvent[]) => phase(fold([started, ...events]), 'prompt');
  const running = [
    ev('phase_started', 1000, { phase: 'prompt', kind: 'agent' }),
    ev('attempt_started', 1000, { phase: 'prompt', attempt: 1, attempts: 3 }),
  ];

  it('a phase is live while it runs or retries, not before nor after', () => {
    expect(isLive(prompt([]))).toBe(false);
    expect(isLive(prompt(running))).toBe(true);
    expect(
      isLive(
        prompt([
          ...running,
          ev('attempt_failed', 2000, { phase: 'prompt', attempt: 1, attempts: 3, motif: 'no JSON', willRetry: true }),
        ]),
      ),
    ).toBe(true);
    expect(
      isLive(
        prompt([
          ...running,
          ev('phase_ok', 3000, {
            phase: 'prompt',
            kind: 'agent',
            attempt: 1,
            attempts: 3,
            seconds: 2,
            tokens: 1,
            cost: 0,
          }),
        ]),
      ),
    ).toBe(false);
    expect(isLive(undefined)).toBe(false);
  });

  it('a phase clock: none before it starts, ticking from its start while live, then the measured seconds', () => {
    expect(phaseSeconds(prompt([]), T0 + 5000)).toBeUndefined();
    expect(phaseSeconds(prompt(running), T0 + 3500)).toBeCloseTo(2.5, 5);
    const done = prompt([
      ...running,
      ev('phase_ok', 3000, {
        phase: 'prompt',
        kind: 'agent',
        attempt: 1,
        attempts: 3,
        seconds: 2.2,
        tokens: 1,
        cost: 0,
      }),
    ]);
    expect(phaseSeconds(done, T0 + 99_000)).toBe(2.2);
  });

  it('the run clock: zero before the start, ticking while it goes, the measured seconds once finished', () => {
    expect(elapsedSeconds(initialRunState().totals, T0)).toBe(0);
    expect(elapsedSeconds(fold([started]).totals, T0 + 4000)).toBe(4);
    const finished = fold([started, ev('run_finished', 6000, { exit: 0, seconds: 5.9, tokens: 0, cost: 0 })]);
    expect(elapsedSeconds(finished.totals, T0 + 99_000)).toBe(5.9);
  });
});
