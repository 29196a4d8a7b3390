import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { say } from '../../src/scripted/tape.js';
import type { PiEvent, Rig } from '../../test/helpers/rig.js';
import { inventory, onBeforeAgentStart, onSessionStart, parseExpected } from '../extensions/factory-inventory.js';
import { SOCLE_NAMES, joinSocle, resetSocleForTests, socleMembers } from '../lib/socle.js';
import {
  inventories,
  makeNodeProject,
  makePartialFactory,
  runNode,
  startNodeRig,
  startRpcNode,
  type NodeProject,
} from './helpers/node-rig.js';

describe('inventory helpers', () => {
  it('parses FACTORY_EXPECTED, defaulting to the five', () => {
    expect(parseExpected(' factory-report, damage-control,,factory-report ')).toEqual([
      'factory-report',
      'damage-control',
    ]);
    expect(parseExpected(undefined)).toEqual([...SOCLE_NAMES]);
    expect(parseExpected('  ')).toEqual([...SOCLE_NAMES]);
  });

  it('compares what loaded to what is expected', () => {
    expect(inventory(['a', 'b', 'c'], ['c', 'a', 'x'], '1.2.3')).toEqual({
      pi_version: '1.2.3',
      present: ['a', 'c', 'x'],
      missing: ['b'],
    });
    expect(inventory(['a'], ['a'], '1.2.3').missing).toEqual([]);
  });

  it('deposits once per session start, however often session_start fires', () => {
    let state = { armed: false };
    expect(onBeforeAgentStart(state).deposit).toBe(false);
    state = onSessionStart(onSessionStart(state)); // a clone fires session_start twice
    const first = onBeforeAgentStart(state);
    expect(first.deposit).toBe(true);
    expect(onBeforeAgentStart(first.state).deposit).toBe(false);
  });
});

describe('socle registry', () => {
  afterEach(() => resetSocleForTests());

  it('is shared through globalThis and idempotent', () => {
    joinSocle('damage-control');
    joinSocle('factory-obs');
    joinSocle('damage-control');
    expect(socleMembers()).toEqual(['damage-control', 'factory-obs']);
    const holder = globalThis as unknown as Record<symbol, Map<string, unknown>>;
    expect([...holder[Symbol.for('factory.socle.registry')].keys()]).toEqual(['damage-control', 'factory-obs']);
  });
});

describe('the inventory in the real pi stream', () => {
  let rig: Rig;
  let project: NodeProject;
  let partial: { root: string; cleanup(): void };
  let partialProject: NodeProject;

  beforeAll(async () => {
    rig = await startNodeRig({ default: [say('ok'), say('ok'), say('ok')] });
    project = makeNodeProject();
    partial = makePartialFactory(['damage-control']);
    partialProject = makeNodeProject(partial.root);
  });
  afterAll(async () => {
    project?.cleanup();
    partialProject?.cleanup();
    partial?.cleanup();
    await rig?.cleanup();
  });

  it('all five loaded: one entry, missing [], the real pi version, before the first model answer', async () => {
    const run = await runNode(rig, project, 'hello');
    expect(inventories(run.events)).toEqual([
      { pi_version: rig.piVersion, present: expect.arrayContaining([...SOCLE_NAMES]), missing: [] },
    ]);
    const at = run.events.findIndex((e) => e.type === 'entry_appended');
    const firstAnswer = run.events.findIndex(
      (e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'assistant',
    );
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(firstAnswer);
  });

  it('damage-control.ts absent from the node: missing names it', async () => {
    const run = await runNode(rig, partialProject, 'hello');
    const [found] = inventories(run.events);
    expect(found?.missing).toEqual(['damage-control']);
    expect(found?.present).toEqual(
      expect.arrayContaining(['factory-guard', 'factory-inventory', 'factory-obs', 'factory-report']),
    );
    expect(found?.present).not.toContain('damage-control');
  });

  it('a name the core expects that no extension provides is missing too', async () => {
    const env = { FACTORY_EXPECTED: 'factory-report,factory-absent' };
    const run = await runNode(rig, project, 'hello', { FACTORY_ENVELOPE_SCHEMA: project.schemaFile, ...env });
    expect(inventories(run.events)[0]?.missing).toEqual(['factory-absent']);
  });
});

describe('the inventory across an RPC clone (real pi)', () => {
  let rig: Rig;
  let project: NodeProject;

  beforeAll(async () => {
    rig = await startNodeRig({ default: [say('one'), say('two'), say('three')] });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  it('is deposited once per session: first prompt, not again on a second prompt, again after a clone', async () => {
    const rpc = startRpcNode(rig, project);
    const marks: number[] = [];
    try {
      await rpc.prompt('one');
      marks.push(rpc.lines.length);
      await rpc.prompt('two');
      marks.push(rpc.lines.length);
      const cloned = rpc.until((l) => l.type === 'response' && l.command === 'clone');
      rpc.send({ type: 'clone' });
      await cloned;
      await rpc.prompt('three');
      marks.push(rpc.lines.length);
    } finally {
      await rpc.close();
    }
    const lines = rpc.lines;
    const countIn = (from: number, to: number) => inventories(lines.slice(from, to) as PiEvent[]).length;
    expect([countIn(0, marks[0]), countIn(marks[0], marks[1]), countIn(marks[1], marks[2])]).toEqual([1, 0, 1]);
  });
});
