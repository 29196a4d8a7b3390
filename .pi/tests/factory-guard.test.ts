import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, say } from '../../src/scripted/tape.js';
import { lastAssistant, type PiEvent, type Rig } from '../../test/helpers/rig.js';
import { freshState, guardStep, readLimits, type GuardEvent, type GuardState, type Limits } from '../extensions/factory-guard.js';
import { makeNodeProject, nodeEnv, resultText, runNode, startNodeRig, toolEnds, type NodeProject } from './helpers/node-rig.js';

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
    expect(run({}, [{ kind: 'turn' }, { kind: 'tool_call' }, { kind: 'cost', usd: 9 }]).actions).toEqual(['continue', 'continue', 'continue']);
  });

  it('trips on the call that exceeds the limit, then blocks every later call', () => {
    const { state, actions } = run({ maxToolCalls: 2 }, [{ kind: 'tool_call' }, { kind: 'tool_call' }, { kind: 'tool_call' }, { kind: 'turn' }, { kind: 'tool_call' }]);
    expect(actions).toEqual(['continue', 'continue', 'trip', 'continue', 'blocked']);
    expect(state.tripped).toBe('factory-guard tripped — tool call limit reached: 2 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped');
    expect(state.toolCalls).toBe(3);
  });

  it('counts turns and cost', () => {
    expect(run({ maxTurns: 1 }, [{ kind: 'turn' }, { kind: 'turn' }]).actions).toEqual(['continue', 'trip']);
    const costly = run({ maxCostUsd: 0.01 }, [{ kind: 'cost', usd: 0.006 }, { kind: 'cost', usd: 0.006 }]);
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
      calls: [call('bash', { command: 'echo one' }), call('bash', { command: 'echo two > two.txt' }), say('never reached')],
      turns: [call('bash', { command: 'echo one' }), call('bash', { command: 'echo two' }), say('never reached')],
    });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  // pi 0.85.1 ends a run aborted between turns with an empty assistant message whose stopReason is
  // "error" and errorMessage "This operation was aborted" (the request is never sent); the guard's own
  // reason travels in its `factory-guard` entry and in the blocked call's result.
  function tripEntries(events: PiEvent[]): { reason: string }[] {
    return events
      .filter((e) => e.type === 'entry_appended' && (e.entry as { customType?: string }).customType === 'factory-guard')
      .map((e) => (e.entry as { data: { reason: string } }).data);
  }

  it('the tool call over FACTORY_MAX_TOOL_CALLS is blocked with the reason, then the agent is aborted', async () => {
    const result = await runNode(rig, project, 'work [tape:calls]', nodeEnv(project, { FACTORY_MAX_TOOL_CALLS: '1' }));
    const ends = toolEnds(result.events, 'bash');
    expect(ends.map((e) => e.isError)).toEqual([false, true]);
    expect(resultText(ends[1])).toBe('factory-guard tripped — tool call limit reached: 1 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped');
    expect(existsSync(path.join(project.dir, 'two.txt'))).toBe(false);
    expect(tripEntries(result.events).map((d) => d.reason)).toEqual([resultText(ends[1])]);
    const last = lastAssistant(result.events);
    expect(last?.stopReason).toBe('error');
    expect(last?.errorMessage).toBe('This operation was aborted');
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

  it('an unreadable limit stops pi at load with the reason', async () => {
    const result = await runNode(rig, project, 'work', nodeEnv(project, { FACTORY_MAX_TURNS: 'lots' }));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('FACTORY_MAX_TURNS must be a non-negative integer, got "lots"');
  });
});
