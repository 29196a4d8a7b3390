// The arm's port (src/bon/dispatch/): the spec an arm is ordered with is plain JSON and names no secret; the arm's
// phase knows the arm only through its dispatcher (events in order, figures and rank from the outcome); the local
// dispatcher tells its arm's events to the sink it is handed, never to the run behind the port.
import { describe, expect, it } from 'vitest';
import { armPhase, armSpecOf, type ArmPlace } from '../../src/bon/arm.js';
import { LocalArmDispatcher } from '../../src/bon/dispatch/local.js';
import { armSpec, type ArmDispatcher, type ArmOutcome, type ArmSpec } from '../../src/bon/dispatch/port.js';
import { BonSession, type BonAdwOptions } from '../../src/bon/session.js';
import { NOTHING_ENDED } from '../../src/bon/turn.js';
import { PhaseFailure } from '../../src/contract/errors.js';
import type { RunEvent } from '../../src/contract/events.js';
import { workspacePaths } from '../../src/config/paths.js';
import type { LiveHarness } from '../../src/harness/types.js';
import { execute, Run } from '../../src/engine/runner.js';

const HEAD = 'c0ffee'.padEnd(40, '0');
const noHarness: LiveHarness = {
  name: 'none',
  run: () => Promise.reject(new Error('not here')),
  openSession: () => Promise.reject(new Error('not here')),
};

function primed(extra: Partial<BonAdwOptions> = {}): { session: BonSession; run: Run; events: RunEvent[] } {
  const run = new Run('adw_bon', '/repo');
  const events: RunEvent[] = [];
  run.subscribe((e) => events.push(e));
  const opts: BonAdwOptions = {
    specPath: 'specs/a.md',
    arms: 2,
    models: ['p/alpha', 'p/beta'],
    harness: noHarness,
    workspace: workspacePaths('/repo'),
    cwd: '/repo',
    payloadCommands: [],
    ...extra,
  };
  const session = new BonSession(run, opts);
  session.check = { spec: 'specs/a.md', specBytes: 10, head: HEAD, root: '/repo', bonDir: '/repo/adws/adw_data/bon/x' };
  session.primer = { tokens: 5, cost: 0.01, sessionId: 'primer-1' };
  session.primerMessages = 4;
  return { session, run, events };
}

/** A dispatcher that plays a script of events, then resolves with the outcome given. */
function scripted(
  outcome: (spec: ArmSpec) => ArmOutcome,
  script: (spec: ArmSpec) => RunEvent[],
): ArmDispatcher & { specs: ArmSpec[] } {
  const specs: ArmSpec[] = [];
  return {
    specs,
    dispatch(spec, events) {
      specs.push(spec);
      for (const e of script(spec)) events(e);
      return { abort: () => undefined, outcome: Promise.resolve(outcome(spec)) };
    },
  };
}

describe('the arm spec', () => {
  it('is what the run knows of the arm, as plain JSON, without the environment or its secrets', () => {
    const { session } = primed({
      env: { OPENAI_API_KEY: 'sk-live-secret-1234', PATH: '/usr/bin' },
      gateEnv: { TOKEN: 'gate-secret-5678' },
      payloadCommands: [{ run: 'npm test', cwd: '/repo/packages/core', timeoutMs: 60_000 }],
      policy: { armMaxCost: 0.5 },
    });
    const spec = armSpecOf(session, 2);
    expect(spec).toEqual({
      adwId: session.run.adwId,
      arm: 2,
      phase: 'arm_2',
      place: 'worktree',
      base: HEAD,
      spec: 'specs/a.md',
      primer: { sessionId: 'primer-1', messages: 4 },
      model: 'p/beta',
      capUsd: 0.5,
      gates: [{ run: 'npm test', cwd: 'packages/core', timeoutMs: 60_000 }],
    });
    const wire = JSON.stringify(spec);
    for (const secret of ['sk-live-secret-1234', 'gate-secret-5678', '/usr/bin']) expect(wire).not.toContain(secret);
    expect(armSpecOf(primed({ inPlace: true }).session, 1).place).toBe('in-place');
  });

  it('refuses what is not in its schema or would not travel', () => {
    const good = armSpecOf(primed().session, 1);
    expect(armSpec(good)).toEqual(good);
    expect(() => armSpec({ ...good, env: { KEY: 'x' } } as ArmSpec)).toThrow();
    expect(() => armSpec({ ...good, base: 'HEAD' })).toThrow();
    expect(() => armSpec({ ...good, phase: 'prime' })).toThrow();
    expect(() => armSpec({ ...good, capUsd: Number.NaN })).toThrow();
  });

  it('needs the primer it starts from', () => {
    const { session } = primed();
    session.primer = { tokens: 0, cost: 0, sessionId: undefined };
    expect(() => armSpecOf(session, 1)).toThrow(/arm 1 has no primer session/);
  });
});

describe('an arm as a phase: fed by its dispatcher only', () => {
  const rank = (arm: number, extra: object = {}) => ({
    arm,
    phase: `arm_${arm}`,
    model: 'p/alpha',
    green: true,
    tokens: 120,
    cost: 0.25,
    seconds: 2,
    patchBytes: 40,
    ...extra,
  });

  it('tells the run its events in order, keeps its session, charges and ranks it from its outcome', async () => {
    const { session, run, events } = primed();
    const dispatcher = scripted(
      () => ({ rank: rank(1) }),
      (spec) => [
        {
          type: 'attempt_started',
          adwId: spec.adwId,
          ts: 1,
          phase: spec.phase,
          attempt: 1,
          attempts: 1,
          sessionId: 'arm-session-1',
          model: spec.model,
        },
        { type: 'usage', adwId: spec.adwId, ts: 2, phase: spec.phase, tokens: 60, cost: 0.1 },
        { type: 'activity', adwId: spec.adwId, ts: 3, phase: spec.phase, activity: { kind: 'note', text: 'reading' } },
      ],
    );
    expect(await execute(run, [armPhase(session, 1, dispatcher, false)])).toBe(0);
    expect(dispatcher.specs.map((s) => s.phase)).toEqual(['arm_1']);
    const seen = events.map((e) => e.type);
    expect(seen.slice(seen.indexOf('attempt_started'), seen.indexOf('attempt_started') + 3)).toEqual([
      'attempt_started',
      'usage',
      'activity',
    ]);
    expect(run.sessions.arm_1).toBe('arm-session-1');
    expect([run.tokens, run.cost]).toEqual([120, 0.25]);
    // The phase's time is the arm's own (one source: the phase table and the ranking of a run show the same seconds).
    expect(events.find((e) => e.type === 'phase_ok')).toMatchObject({
      phase: 'arm_1',
      tokens: 120,
      cost: 0.25,
      seconds: 2,
    });
    expect(session.arms.get(1)).toEqual(rank(1));
  });

  it("a red outcome is the phase's failure, its motif, detail and kind as the arm said them", async () => {
    const { session, run, events } = primed();
    const red = rank(2, { green: false, motif: 'gate test is red', failure: 'gate', tokens: 80, cost: 0.2 });
    const dispatcher = scripted(
      () => ({ rank: red, failure: { motif: 'gate test is red', detail: '1 failing', kind: 'gate' } }),
      () => [],
    );
    await execute(run, [armPhase(session, 2, dispatcher, false)]);
    expect(events.find((e) => e.type === 'phase_failed')).toMatchObject({
      phase: 'arm_2',
      motif: 'gate test is red',
      failure: 'gate',
      tokens: 80,
      cost: 0.2,
      seconds: 2,
    });
    expect(session.arms.get(2)).toEqual(red);
  });
});

describe('the local dispatcher', () => {
  it('runs the arm where its place is and tells its events to the sink, not to the run', async () => {
    const { session, events } = primed();
    let released = 0;
    const place: ArmPlace = {
      prepare: () => Promise.resolve(),
      open: (started) => {
        started('arm-session-7');
        return Promise.reject(new PhaseFailure('its tree could not be made', undefined, 'crashed'));
      },
      ready: () => Promise.resolve(undefined),
      endTurn: () => Promise.resolve(NOTHING_ENDED),
      lateEnd: () => Promise.resolve(NOTHING_ENDED),
      gates: () => undefined,
      release: async () => {
        released += 1;
      },
      harvest: () => Promise.resolve({}),
    };
    const sink: RunEvent[] = [];
    const job = new LocalArmDispatcher(session, () => place).dispatch(armSpecOf(session, 1), (e) => sink.push(e));
    const { rank: ranked, failure } = await job.outcome;
    expect(failure).toEqual({ motif: 'its tree could not be made', kind: 'crashed' });
    expect(ranked).toMatchObject({
      arm: 1,
      phase: 'arm_1',
      green: false,
      motif: 'its tree could not be made',
      failure: 'crashed',
    });
    expect(sink).toEqual([
      expect.objectContaining({
        type: 'attempt_started',
        phase: 'arm_1',
        sessionId: 'arm-session-7',
        model: 'p/alpha',
      }),
    ]);
    expect(events).toEqual([]);
    expect(released).toBe(1);
  });
});
