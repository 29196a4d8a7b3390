import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions, PI_MIN_VERSION } from '../../src/pi/resolve.js';
import { readStream } from '../../src/pi/stream.js';
import { verdict } from '../../src/pi/verdict.js';
import { call, say } from '../../src/scripted/tape.js';
import { lastAssistant, piUnderTest, startRig, type PiEvent, type Rig } from '../../test/helpers/rig.js';
import {
  cacheWarmingDecision,
  freshState,
  guardStep,
  readLimits,
  type GuardEvent,
  type GuardState,
  type Limits,
} from '../extensions/factory-guard.js';
import {
  makeNodeProject,
  makePartialFactory,
  nodeEnv,
  resultText,
  runNode,
  startNodeRig,
  startRpcNode,
  toolEnds,
  type NodeProject,
} from './helpers/node-rig.js';

function run(limits: Limits, events: GuardEvent[]): { state: GuardState; actions: string[] } {
  let state = freshState();
  const actions: string[] = [];
  for (const event of events) {
    const step = guardStep(state, limits, event);
    state = step.state;
    actions.push(step.verdict.action);
  }
  return { state, actions };
}

describe('readLimits', () => {
  it('reads integers, treats absent or empty as unlimited', () => {
    expect(readLimits({ FACTORY_MAX_TURNS: '3', FACTORY_MAX_TOOL_CALLS: '0', FACTORY_MAX_COST_USD: '0.5' })).toEqual({
      maxTurns: 3,
      maxToolCalls: 0,
      maxCostUsd: 0.5,
    });
    expect(readLimits({ FACTORY_MAX_TURNS: '' })).toEqual({});
  });

  it.each([
    [{ FACTORY_MAX_TURNS: 'ten' }, 'FACTORY_MAX_TURNS must be a non-negative integer, got "ten"'],
    [{ FACTORY_MAX_TOOL_CALLS: '2.5' }, 'FACTORY_MAX_TOOL_CALLS must be a non-negative integer, got "2.5"'],
    [{ FACTORY_MAX_COST_USD: '-1' }, 'FACTORY_MAX_COST_USD must be a non-negative number, got "-1"'],
  ])('refuses an unreadable limit %j', (env, motif) => {
    expect(() => readLimits(env)).toThrow(motif);
  });
});

describe('guardStep', () => {
  it('never trips without limits', () => {
    expect(run({}, [{ kind: 'turn' }, { kind: 'tool_call' }, { kind: 'cost', usd: 9 }]).actions).toEqual([
      'continue',
      'continue',
      'continue',
    ]);
  });

  it('trips on the call that exceeds the limit, then blocks every later call', () => {
    const { state, actions } = run({ maxToolCalls: 2 }, [
      { kind: 'tool_call' },
      { kind: 'tool_call' },
      { kind: 'tool_call' },
      { kind: 'turn' },
      { kind: 'tool_call' },
    ]);
    expect(actions).toEqual(['continue', 'continue', 'trip', 'continue', 'blocked']);
    expect(state.tripped).toBe(
      'factory-guard tripped — tool call limit reached: 2 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped',
    );
    expect(state.toolCalls).toBe(3);
  });

  it('counts turns and cost', () => {
    expect(run({ maxTurns: 1 }, [{ kind: 'turn' }, { kind: 'turn' }]).actions).toEqual(['continue', 'trip']);
    const costly = run({ maxCostUsd: 0.01 }, [
      { kind: 'cost', usd: 0.006 },
      { kind: 'cost', usd: 0.006 },
    ]);
    expect(costly.actions).toEqual(['continue', 'trip']);
    expect(costly.state.tripped).toContain('cost limit reached: $0.0120 spent, $0.01 allowed');
    expect(run({ maxTurns: 0 }, [{ kind: 'turn' }]).actions).toEqual(['trip']);
  });
});

describe('factory-guard in the real pi', () => {
  let rig: Rig;
  let project: NodeProject;

  beforeAll(async () => {
    rig = await startNodeRig({
      calls: [
        call('bash', { command: 'echo one' }),
        call('bash', { command: 'echo two > two.txt' }),
        say('never reached'),
      ],
      turns: [call('bash', { command: 'echo one' }), call('bash', { command: 'echo two' }), say('never reached')],
      gated: [call('bash', { command: 'echo one' }), say('never reached')],
    });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  // pi ends a run aborted between turns with an empty assistant message, errorMessage "This operation was
  // aborted" (the request is never sent), whose stopReason is "error" up to 1.5.0 and "aborted" from 1.5.1; the
  // guard's own reason travels in its `factory-guard` entry and in the blocked call's result.
  function tripEntries(events: PiEvent[]): { reason: string }[] {
    return events
      .filter((e) => e.type === 'entry_appended' && (e.entry as { customType?: string }).customType === 'factory-guard')
      .map((e) => (e.entry as { data: { reason: string } }).data);
  }

  it('the tool call over FACTORY_MAX_TOOL_CALLS is blocked with the reason, then the agent is aborted', async () => {
    const result = await runNode(rig, project, 'work [tape:calls]', nodeEnv(project, { FACTORY_MAX_TOOL_CALLS: '1' }));
    const ends = toolEnds(result.events, 'bash');
    expect(ends.map((e) => e.isError)).toEqual([false, true]);
    expect(resultText(ends[1])).toBe(
      'factory-guard tripped — tool call limit reached: 1 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped',
    );
    expect(existsSync(path.join(project.dir, 'two.txt'))).toBe(false);
    expect(tripEntries(result.events).map((d) => d.reason)).toEqual([resultText(ends[1])]);
    const last = lastAssistant(result.events);
    expect(['error', 'aborted']).toContain(last?.stopReason);
    expect(last?.errorMessage).toBe('This operation was aborted');
    // What the factory makes of that stream, whichever pi wrote it: the guard's verdict with its own reason.
    const judged = verdict(readStream(result.events.map((e) => JSON.stringify(e))), {
      exitCode: result.exitCode,
      expectedSocle: ['factory-guard'],
      stderrTail: result.stderr,
      minVersion: PI_MIN_VERSION,
    });
    expect(judged).toEqual({ ok: false, kind: 'guard', motif: resultText(ends[1]) });
    expect(rig.model.requestsFor('calls')).toHaveLength(2); // the aborted turn never reached the model
  });

  it('the turn over FACTORY_MAX_TURNS is aborted before its model request', async () => {
    const result = await runNode(rig, project, 'work [tape:turns]', nodeEnv(project, { FACTORY_MAX_TURNS: '1' }));
    expect(toolEnds(result.events, 'bash').map((e) => e.isError)).toEqual([false]);
    expect(tripEntries(result.events).map((d) => d.reason)).toEqual([
      'factory-guard tripped — turn limit reached: 1 turn(s) allowed (FACTORY_MAX_TURNS); the agent is stopped',
    ]);
    expect(lastAssistant(result.events)?.errorMessage).toBe('This operation was aborted');
    expect(rig.model.requestsFor('turns')).toHaveLength(1);
  });

  it("a batch stopped between a turn's reservation and its request: the request never leaves (the gate's go, asked at before_provider_request)", async () => {
    // The cockpit's gate, played by hand: every reservation granted; the second turn's go refused, as the spend
    // watch refuses it once the batch stopped after the grant.
    const asked: string[] = [];
    const server = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const op = (request.url ?? '').split('/').at(-1)!;
        asked.push(op);
        const stopped = op === 'go' && asked.filter((a) => a === 'go').length === 2;
        response.end(
          JSON.stringify(
            stopped
              ? { ok: false, reason: 'stopped: 1 arm already green (--stop-after-green 1)' }
              : { ok: true, id: `r${asked.length}` },
          ),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
      const result = await runNode(
        rig,
        project,
        'work [tape:gated]',
        nodeEnv(project, { FACTORY_BUDGET_URL: url, FACTORY_PHASE: 'arm_2' }),
      );
      expect(asked.filter((a) => a === 'go')).toHaveLength(2);
      expect(rig.model.requestsFor('gated')).toHaveLength(1); // the second turn's request was built, never sent
      // Aborted at the request (the provider client's words: "Request aborted"), not answered.
      expect(lastAssistant(result.events)).toMatchObject({
        stopReason: expect.stringMatching(/^(aborted|error)$/),
        errorMessage: expect.stringMatching(/abort/i),
      });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('an unreadable limit stops pi at load with the reason', async () => {
    const result = await runNode(rig, project, 'work', nodeEnv(project, { FACTORY_MAX_TURNS: 'lots' }));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('FACTORY_MAX_TURNS must be a non-negative integer, got "lots"');
  });
});

describe('cacheWarmingDecision', () => {
  it('vetoes prompt-cache warming in a factory node only (FACTORY_PHASE set)', () => {
    expect(cacheWarmingDecision({ FACTORY_PHASE: 'arm_1' })).toEqual({ action: 'stop' });
    expect(cacheWarmingDecision({})).toBeUndefined();
  });
});

// pi < 0.86 has no cache warming at all: nothing to stop there, and nothing this test could observe.
const CACHE_WARMING_SINCE = '0.86.0';
const warmingPi = compareVersions((await piUnderTest()).version, CACHE_WARMING_SINCE) >= 0;

describe.runIf(warmingPi)('factory-guard stops prompt-cache warming in the real pi (RPC, idle between turns)', () => {
  // What the scripted model allows: it declares a fictional 11 s cache lifetime (pi then refreshes ~1 s after a
  // request) and a cache-write price that makes a refresh "pay". The server has no cache, so real cache lifetimes
  // and savings cannot be shown here; what is shown is whether pi sends the refresh request at all. The control is
  // the same node without factory-guard, started at the same time: its refresh proves the window was long enough.
  // No FACTORY_MAX_* limits here: the guard then registers no turn_end handler, whose side effect on 1.6 would
  // also end the warming and hide whether the veto itself works.
  let rig: Rig;
  let project: NodeProject;
  let partial: { root: string; cleanup(): void };
  let partialProject: NodeProject;

  beforeAll(async () => {
    rig = await startRig({
      tapes: { guarded: [say('idle now')], control: [say('idle now')] },
      models: [
        { id: 'cached', cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 2000 }, promptCache: { short: 11 } },
      ],
      settings: { cacheWarming: 'idle' },
    });
    project = makeNodeProject();
    partial = makePartialFactory(['factory-guard']);
    partialProject = makeNodeProject(partial.root);
  });
  afterAll(async () => {
    project?.cleanup();
    partialProject?.cleanup();
    partial?.cleanup();
    await rig?.cleanup();
  });

  it('no refresh request leaves a factory node after its turn; the node without the guard sends them', async () => {
    const guarded = startRpcNode(rig, project);
    const control = startRpcNode(rig, partialProject);
    try {
      await Promise.all([guarded.prompt('[tape:guarded] hello'), control.prompt('[tape:control] hello')]);
      const billed = (node: typeof control) =>
        node.lines.some((l) => l.type === 'entry_appended' && (l.entry as { type?: string }).type === 'usage');
      // Until the control's refresh is billed: its request reaches the server before pi has read the answer and
      // written the usage line, so both are waited for (the deadline is a hang guard, not a measure of speed).
      const deadline = Date.now() + 120_000;
      while (!(rig.model.requestsFor('control').length >= 2 && billed(control)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      // The control refreshed (a one-token replay of its request, billed as a `usage` entry, not a message_end)…
      expect(rig.model.requestsFor('control').length).toBeGreaterThanOrEqual(2);
      expect(billed(control)).toBe(true);
      // …and the guarded node, due at the same time, never did (one more refresh period of margin).
      await new Promise((r) => setTimeout(r, 1_500));
      expect(rig.model.requestsFor('guarded')).toHaveLength(1);
      expect(billed(guarded)).toBe(false);
    } finally {
      await Promise.all([guarded.close(), control.close()]);
    }
  });
});
