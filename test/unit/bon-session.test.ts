// The bon session (src/bon/session.ts) without pi: the arm factory it is given, the board's keys (add an arm, abort
// one), the route per arm, and the live session it opens and reopens through the harness port.
import { describe, expect, it } from 'vitest';
import { bonPhases } from '../../adws/adw_bon.js';
import { MAX_ARMS } from '../../src/bon/check.js';
import { BON_TOOLS, BonSession, type ArmPhaseFactory, type BonAdwOptions } from '../../src/bon/session.js';
import { InfrastructureError, PhaseFailure } from '../../src/contract/errors.js';
import type { RunEvent } from '../../src/contract/events.js';
import type { AgentSession, LiveHarness, SessionRequest } from '../../src/harness/types.js';
import { workspacePaths } from '../../src/config/paths.js';
import { Run, type Phase } from '../../src/engine/runner.js';

function fakeSession(sessionId: string, alive = true): AgentSession & { closed: number } {
  return {
    sessionId,
    model: undefined,
    alive,
    pid: 4242,
    closed: 0,
    prompt: () => Promise.reject(new Error('not in this test')),
    clone: () => Promise.reject(new Error('not in this test')),
    sessionFile: () => Promise.resolve(undefined),
    messageCount: () => Promise.resolve(0),
    switchSession: () => Promise.reject(new Error('not in this test')),
    switchModel: () => Promise.resolve(),
    endToolProcesses: () => Promise.resolve([]),
    steer: () => Promise.resolve(),
    prices: () => Promise.resolve(new Map()),
    async close() {
      this.closed += 1;
    },
  };
}

function harness(
  open: (request: SessionRequest) => Promise<AgentSession> = async (r) => fakeSession(r.sessionId),
): LiveHarness & { requests: SessionRequest[] } {
  const requests: SessionRequest[] = [];
  return {
    name: 'fake',
    requests,
    run: () => Promise.reject(new Error('not in this test')),
    openSession: (request) => {
      requests.push(request);
      return open(request);
    },
  };
}

function options(extra: Partial<BonAdwOptions> = {}): BonAdwOptions {
  return {
    specPath: 'specs/a.md',
    arms: 2,
    models: [],
    harness: harness(),
    workspace: workspacePaths('/repo'),
    cwd: '/repo',
    payloadCommands: [],
    ...extra,
  };
}

function session(extra: Partial<BonAdwOptions> = {}): { session: BonSession; events: RunEvent[] } {
  const run = new Run('adw_bon', '/repo');
  const events: RunEvent[] = [];
  run.subscribe((e) => events.push(e));
  return { session: new BonSession(run, options(extra)), events };
}

const codePhase = (name: string): Phase => ({ name, kind: 'code', action: () => undefined });
const fakeArm: ArmPhaseFactory = (s, arm) => ({
  name: `arm_${arm}`,
  arm,
  kind: 'agent',
  optional: true,
  model: s.modelOf(arm),
  action: () => undefined,
});

describe('BonSession: the arm factory', () => {
  it('adds an arm with the injected factory, before the harvest, and plans it as an event', () => {
    const { session: s, events } = session({ models: ['p/a', 'p/b'] });
    const built: number[] = [];
    s.plan([codePhase('check'), fakeArm(s, 1), codePhase('harvest')], (at, arm) => {
      built.push(arm);
      expect(at).toBe(s);
      return fakeArm(at, arm);
    });
    expect(s.addArm()).toBeUndefined();
    expect(built).toEqual([2]);
    expect(s.phases.map((p) => p.name)).toEqual(['check', 'arm_1', 'arm_2', 'harvest']);
    expect(s.armCount()).toBe(2);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'phase_planned',
        before: 'harvest',
        phase: { name: 'arm_2', kind: 'agent', attempts: 1, model: 'p/b', arm: 2 },
      }),
    ]);
  });

  it('refuses past the most a batch takes, after the harvest, and before any plan', () => {
    const { session: unplanned, events } = session();
    expect(unplanned.addArm()).toBe('the batch is not planned yet: no arm to add');
    const { session: s } = session();
    s.plan([...Array.from({ length: MAX_ARMS }, (_, i) => fakeArm(s, i + 1)), codePhase('harvest')], fakeArm);
    expect(s.addArm()).toBe(`already ${MAX_ARMS} arms: the most a batch takes`);
    s.markHarvested();
    expect(s.addArm()).toBe('the harvest is done: no more arms');
    // Each refusal is an event, so that the board's count of clones asked for is right at once.
    expect(events).toEqual([
      expect.objectContaining({ type: 'clone_refused', motif: 'the batch is not planned yet: no arm to add' }),
    ]);
  });

  it('is wired by bonPhases: the workflow builds its own arm for `c`', () => {
    const { session: s } = session({ arms: 2, models: ['p/a'] });
    const phases = bonPhases(s);
    expect(phases).toBe(s.phases);
    expect(phases.map((p) => p.name)).toEqual(['check', 'prime', 'arm_1', 'arm_2', 'harvest']);
    expect(s.addArm()).toBeUndefined();
    const added = s.phases[s.phases.length - 2]!;
    expect({
      name: added.name,
      arm: added.arm,
      kind: added.kind,
      optional: added.optional,
      model: added.model,
    }).toEqual({ name: 'arm_3', arm: 3, kind: 'agent', optional: true, model: 'p/a' });
  });
});

describe('BonSession: routes and aborts', () => {
  it('gives arm k models[(k-1) % length], the builder route without models', () => {
    const { session: s } = session({ models: ['p/a', 'p/b'], builderModel: 'p/x' });
    expect([1, 2, 3].map((k) => s.modelOf(k))).toEqual(['p/a', 'p/b', 'p/a']);
    expect(session({ builderModel: 'p/x' }).session.modelOf(4)).toBe('p/x');
  });

  it('aborts one arm only, and every arm when the run is interrupted', () => {
    const { session: s } = session();
    const one = s.armSignal(1);
    const two = s.armSignal(2);
    s.abortArm(1);
    s.abortArm(9);
    expect([one.aborted, two.aborted]).toEqual([true, false]);
    s.run.abort();
    expect(two.aborted).toBe(true);
    expect(s.armSignal(3).aborted).toBe(true);
  });
});

describe('BonSession: the live session', () => {
  it('opens through the port with the builder route, the bon tools and the build envelope', async () => {
    const live = harness();
    const { session: s } = session({ harness: live, models: ['p/a'], thinking: 'low', env: { A: '1' } });
    const rpc = await s.open('sess-1', 'prime');
    expect(rpc.sessionId).toBe('sess-1');
    const request = live.requests[0]!;
    expect({ ...request, envelopeSchema: request.envelopeSchema?.title }).toEqual({
      sessionId: 'sess-1',
      cwd: '/repo',
      workspace: workspacePaths('/repo'),
      model: 'p/a',
      thinking: 'low',
      tools: BON_TOOLS,
      // Every node of the run is given the spend gate's address (../../src/bon/spend/budgetServer.ts).
      env: { A: '1', FACTORY_BUDGET_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/) },
      identity: { adwId: s.run.adwId, phase: 'prime', role: 'builder' },
      envelopeSchema: 'BuildEnvelope',
      limits: undefined,
    });
    await s.close();
  });

  it('says pi could not start when the port fails to open', async () => {
    const { session: s } = session({ harness: harness(() => Promise.reject(new Error('spawn ENOENT'))) });
    const error = await s.open('sess-1', 'prime').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).message).toBe('pi could not start in RPC mode: spawn ENOENT');
    // An arm's own pi is the arm's failure: red with why, the batch goes on.
    const armError = await s.open('sess-2', 'arm_2').catch((e: unknown) => e);
    expect(armError).toBeInstanceOf(PhaseFailure);
    expect([(armError as PhaseFailure).message, (armError as PhaseFailure).kind]).toEqual([
      'pi could not start in RPC mode: spawn ENOENT',
      'crashed',
    ]);
    await s.close();
  });

  it('keeps a live session, reopens a dead one on the primer, and needs a primer to do so', async () => {
    const live = harness();
    const { session: s } = session({ harness: live });
    await expect(s.ensureRpc()).rejects.toThrow('no primer session to clone from');
    const alive = fakeSession('arm-clone');
    s.rpc = alive;
    expect(await s.ensureRpc()).toBe(alive);
    const dead = fakeSession('arm-clone', false);
    s.rpc = dead;
    s.primer = { tokens: 1, cost: 0, sessionId: 'primer-1' };
    const reopened = await s.ensureRpc();
    expect(dead.closed).toBe(1);
    expect(reopened.sessionId).toBe('primer-1');
    expect(s.rpc).toBe(reopened);
    expect(live.requests.map((r) => [r.sessionId, r.identity?.phase])).toEqual([['primer-1', 'prime']]);
    await s.close();
    expect(s.rpc).toBeUndefined();
  });
});
