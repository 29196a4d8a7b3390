// The node battery: every extension of the factory's pi node, loaded together in the real pi 0.85.1
// pipeline (a repo prepared by installNode, `--approve`), each proven active by what it does, at zero
// tokens (scripted model, no key, no network). This is what `factory doctor` runs:
//
//   npx vitest run .pi/tests/battery.test.ts        (exit 0 = the node is sound)
//
// The per-extension files next to it test every rule and edge; the battery is the short, whole-node proof.
// The runs start together in beforeAll so the battery costs about one pi start-up, not one per check.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, report, say } from '../../src/scripted/tape.js';
import { lastAssistant, startRig, type PiEvent, type PiRun, type Rig } from '../../test/helpers/rig.js';
import { entriesOf, extensionsOnDisk, hasExtension, phaseEnv, requestText } from './helpers/battery.js';
import { FACTORY_ROOT, inventories, makeNodeProject, resultText, runNode, startRpcNode, toolEnds, type NodeProject } from './helpers/node-rig.js';

const SOCLE_FIVE = ['damage-control', 'factory-obs', 'factory-report', 'factory-guard', 'factory-inventory'];
const ON_DISK = extensionsOnDisk(FACTORY_ROOT);

const ENVELOPE = { status: 'success', summary: 'battery', changed_files: ['obs.txt'] };
const BRIEF_MARKER = 'battery-brief-7c1e: the builder writes only under src/';
const MISSION = 'battery mission 3f9a — keep this sentence verbatim through compaction [tape:compact]';

let rig: Rig;
let project: NodeProject;
let pipeline: PiRun;
let guarded: PiRun;
let compaction: PiEvent | Error | undefined;

/** Two turns in a long-lived pi (RPC), then a manual compaction: its response carries the stored summary. */
async function compactOnce(): Promise<PiEvent | Error> {
  const rpc = startRpcNode(rig, project, phaseEnv(project, ON_DISK));
  try {
    await rpc.prompt(MISSION);
    await rpc.prompt('go on [tape:compact]');
    const response = rpc.until((l) => l.type === 'response' && l.command === 'compact');
    rpc.send({ type: 'compact' });
    return await response;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    await rpc.close();
  }
}

beforeAll(async () => {
  rig = await startRig({
    // A short session has something to compact only when pi keeps few recent tokens (default 20k).
    settings: { compaction: { enabled: true, keepRecentTokens: 10 } },
    tapes: {
      // One phase through the whole node: a destructive command, a traced command, then the gate.
      pipeline: [call('bash', { command: 'rm -rf /' }), call('bash', { command: 'echo battery > obs.txt' }), report(ENVELOPE), say('never requested')],
      guard: [call('bash', { command: 'echo one' }), call('bash', { command: 'echo two > two.txt' }), say('never requested')],
      compact: [say('noted'), say('still noted'), say('## Progress\n### Done\n- the battery ran')],
    },
  });
  project = makeNodeProject();
  // The workspace brief wins over the factory's own: a marker only this file carries proves the injection.
  const briefs = path.join(project.dir, 'adws', 'adw_config', 'briefs');
  mkdirSync(briefs, { recursive: true });
  writeFileSync(path.join(briefs, 'builder.md'), `# Builder\n\n${BRIEF_MARKER}\n`);
  [pipeline, guarded, compaction] = await Promise.all([
    runNode(rig, project, 'run the battery [tape:pipeline]', phaseEnv(project, ON_DISK)),
    runNode(rig, project, 'run the guard [tape:guard]', phaseEnv(project, ON_DISK, { FACTORY_MAX_TOOL_CALLS: '1' })),
    compactOnce(),
  ]);
});

afterAll(async () => {
  project?.cleanup();
  await rig?.cleanup();
});

describe('the node battery (real pi, scripted model)', () => {
  it('pi ran the phase to its end', () => {
    expect(pipeline.exitCode, pipeline.stderr).toBe(0);
    expect(ON_DISK).toEqual(expect.arrayContaining(SOCLE_FIVE));
  });

  it('factory-inventory: every extension on disk is present, none missing, before the first answer', () => {
    expect(inventories(pipeline.events)).toEqual([{ pi_version: '0.85.1', present: [...ON_DISK].sort(), missing: [] }]);
    const at = pipeline.events.findIndex((e) => e.type === 'entry_appended');
    const firstAnswer = pipeline.events.findIndex((e) => e.type === 'message_end' && (e.message as { role?: string }).role === 'assistant');
    expect(at).toBeLessThan(firstAnswer);
  });

  it('damage-control: `rm -rf /` is blocked and the model told why', () => {
    const [blocked, allowed] = toolEnds(pipeline.events, 'bash');
    expect(blocked?.isError).toBe(true);
    expect(resultText(blocked)).toMatch(/^Blocked by damage-control: bash command matches deny rule/);
    expect(allowed?.isError).toBe(false);
    expect(readFileSync(path.join(project.dir, 'obs.txt'), 'utf8')).toBe('battery\n');
  });

  it('factory-report: report_phase is registered, validates, and terminates the run', () => {
    const [end] = toolEnds(pipeline.events, 'report_phase');
    expect(end?.isError).toBe(false);
    expect((end?.result as { details?: unknown }).details).toEqual(ENVELOPE);
    expect(lastAssistant(pipeline.events)?.stopReason).toBe('toolUse');
    expect(rig.model.requestsFor('pipeline')).toHaveLength(3); // no model call after the report
  });

  it('factory-obs: the harness trace holds the session, both tool calls and the shutdown, stamped', () => {
    const file = path.join(project.dataDir, 'traces', 'harness', `${pipeline.sessionId}.jsonl`);
    expect(existsSync(file)).toBe(true);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const types = lines.map((l) => String(l.type));
    expect(types[0]).toBe('session_start');
    expect(types.at(-1)).toBe('session_shutdown');
    expect(types.filter((t) => t === 'tool_end')).toHaveLength(3); // rm (blocked), echo, report_phase
    const rm = lines.find((l) => l.type === 'tool_end' && l.tool_name === 'bash');
    expect(rm).toMatchObject({ is_error: true, phase: 'build', role: 'builder', adw_id: 'b4773e11', session_id: pipeline.sessionId });
  });

  it('factory-guard: the call over FACTORY_MAX_TOOL_CALLS is blocked and the agent aborted', () => {
    const ends = toolEnds(guarded.events, 'bash');
    expect(ends.map((e) => e.isError)).toEqual([false, true]);
    expect(resultText(ends[1])).toContain('factory-guard tripped — tool call limit reached: 1 call(s) allowed');
    expect(entriesOf(guarded.events, 'factory-guard')).toHaveLength(1);
    expect(existsSync(path.join(project.dir, 'two.txt'))).toBe(false);
    expect(rig.model.requestsFor('guard')).toHaveLength(2);
  });

  it('factory-context: the role brief reaches the model with the first request', () => {
    const [first] = rig.model.requestsFor('pipeline');
    expect(requestText(first?.body)).toContain(BRIEF_MARKER);
  });

  it('factory-compact: a compaction keeps the [FACTORY] block with the mission verbatim', () => {
    if (compaction instanceof Error) throw compaction;
    expect(compaction?.success, JSON.stringify(compaction)).toBe(true);
    const summary = String((compaction?.data as { summary?: unknown } | undefined)?.summary);
    expect(summary).toContain('<!-- [FACTORY] -->');
    expect(summary).toContain('phase: build · role: builder · run: b4773e11');
    expect(summary).toContain(MISSION);
  });
});
