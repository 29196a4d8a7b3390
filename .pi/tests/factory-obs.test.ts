import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareVersions } from '../../src/pi/resolve.js';
import { call, say } from '../../src/scripted/tape.js';
import type { Rig } from '../../test/helpers/rig.js';
import {
  ARG_PREVIEW_CHARS,
  appendTrace,
  dotEnvValuesIn,
  identityFrom,
  messageFields,
  nodeRedactor,
  previewArgs,
  traceDir,
  tracePath,
  traceRecord,
} from '../extensions/factory-obs.js';
import { makeNodeProject, nodeEnv, runNode, startNodeRig, type NodeProject } from './helpers/node-rig.js';

describe('trace helpers', () => {
  it('places the trace under FACTORY_DATA_DIR, else under the project', () => {
    expect(traceDir({ FACTORY_DATA_DIR: '/data' }, '/p')).toBe('/data/traces/harness');
    expect(traceDir({}, '/p')).toBe('/p/adws/adw_data/traces/harness');
    expect(tracePath('/d', 'abc-1.2_3')).toBe('/d/abc-1.2_3.jsonl');
    expect(tracePath('/d', '../evil/id')).toBe('/d/.._evil_id.jsonl');
  });

  it('stamps every record with time, session and phase identity', () => {
    const identity = identityFrom({ FACTORY_PHASE: 'build', FACTORY_ADW_ID: 'ab12cd34' });
    const record = traceRecord('tool_end', 's1', identity, { tool_name: 'bash' }, new Date('2026-01-02T03:04:05Z'));
    expect(record).toEqual({
      ts: '2026-01-02T03:04:05.000Z',
      type: 'tool_end',
      session_id: 's1',
      phase: 'build',
      role: null,
      adw_id: 'ab12cd34',
      tool_name: 'bash',
    });
  });

  it('keeps what matters of a message and cuts long arguments', () => {
    const usage = { input: 10, output: 2, totalTokens: 12, cost: { total: 0.01 } };
    expect(
      messageFields({ role: 'assistant', provider: 'p', model: 'm', usage, stopReason: 'stop', content: [] }),
    ).toEqual({
      message_role: 'assistant',
      usage,
      stop_reason: 'stop',
      model: 'p/m',
    });
    expect(messageFields({ role: 'user', content: 'hi' })).toEqual({ message_role: 'user' });
    const long = 'x'.repeat(ARG_PREVIEW_CHARS + 10);
    const cut = previewArgs({ path: 'a', content: long, n: 3 }) as Record<string, string>;
    expect(cut.content).toBe(`${'x'.repeat(ARG_PREVIEW_CHARS)}… [${ARG_PREVIEW_CHARS + 10} chars]`);
    expect(cut.path).toBe('a');
  });

  it('appends lines and never throws when the disk refuses', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'factory-obs-unit-'));
    try {
      const file = path.join(dir, 'deep', 's.jsonl');
      const record = traceRecord('x', 's', identityFrom({}));
      expect(appendTrace(file, record)).toBe(true);
      expect(appendTrace(file, record)).toBe(true);
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
      const blocker = path.join(dir, 'not-a-dir');
      writeFileSync(blocker, '');
      expect(appendTrace(path.join(blocker, 's.jsonl'), record)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('secret masking', () => {
  it('masks the values of credential variables and of the project .env, by name, raw and JSON-escaped', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'factory-obs-env-'));
    try {
      // Quoted and exported: the cockpit's own parser reads it, so the node masks exactly what the cockpit would.
      writeFileSync(path.join(dir, '.env'), 'export DENIED_SECRET="den\\"ied-0123"\nPLAIN=plain-value-42\nSHORT=abc\n');
      expect(dotEnvValuesIn(dir)).toEqual({ DENIED_SECRET: 'den"ied-0123', PLAIN: 'plain-value-42', SHORT: 'abc' });
      const redact = nodeRedactor(
        { OPENROUTER_API_KEY: 'sk-or-123456', HOME: '/root/home', LONG_SECRET: 'sk-or-123456-and-more' },
        dir,
      );
      const record = traceRecord('tool_start', 's', identityFrom({}), {
        args: { command: 'echo sk-or-123456-and-more sk-or-123456 den"ied-0123 plain-value-42 abc /root/home' },
      });
      const file = path.join(dir, 'trace.jsonl');
      expect(appendTrace(file, record, redact)).toBe(true);
      const line = readFileSync(file, 'utf8');
      expect((JSON.parse(line) as { args: { command: string } }).args.command).toBe(
        'echo «redacted:LONG_SECRET» «redacted:OPENROUTER_API_KEY» «redacted:DENIED_SECRET» «redacted:PLAIN» abc /root/home',
      );
      for (const value of ['sk-or-123456', 'den', 'plain-value']) expect(line).not.toContain(value);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('masks strings only: a numeric secret never eats into a number of the record', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'factory-obs-env-'));
    try {
      writeFileSync(path.join(dir, '.env'), 'PIN_CODE=202601\n');
      const record = traceRecord(
        'message_end',
        's',
        identityFrom({}),
        { usage: { input: 20260102 }, error_message: 'pin 202601 refused' },
        new Date('2026-01-02T03:04:05Z'),
      );
      const file = path.join(dir, 'trace.jsonl');
      appendTrace(file, record, nodeRedactor({}, dir));
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(parsed).toMatchObject({
        usage: { input: 20260102 },
        error_message: 'pin «redacted:PIN_CODE» refused',
        ts: '2026-01-02T03:04:05.000Z',
      });
      // No .env, no credential: nothing to mask, and no error.
      expect(dotEnvValuesIn(path.join(dir, 'missing'))).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const DENIED = 'denied-value-0d1e2f3a';
const GIVEN = 'given-value-4b5c6d7e';

describe('factory-obs in the real pi', () => {
  let rig: Rig;
  let project: NodeProject;

  beforeAll(async () => {
    rig = await startNodeRig({
      traced: [call('bash', { command: 'echo traced' }), say('done')],
      unwritable: [call('bash', { command: 'echo still works' }), say('done')],
      // The agent read `.env` and echoes a value its node was never given (a closed vault), plus its own key.
      denied: [call('bash', { command: `echo ${DENIED} ${GIVEN}` }), say('done')],
    });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  it('writes one line per session start, tool start/end, message end and shutdown, stamped with the phase', async () => {
    const run = await runNode(rig, project, 'trace me [tape:traced]');
    const file = path.join(project.dataDir, 'traces', 'harness', `${run.sessionId}.jsonl`);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // pi ≥ 0.86 opens the conversation with a `role: "system"` message (the prompt and tools): obs records its role
    // only, like any message. Which pi runs is known, so the line is required there and absent before.
    const systemMessage = compareVersions(rig.piVersion, '0.86.0') >= 0 ? ['message_end:system'] : [];
    expect(lines.map((l) => (l.type === 'message_end' ? `message_end:${String(l.message_role)}` : l.type))).toEqual([
      'session_start',
      ...systemMessage,
      'message_end:user',
      'message_end:custom', // the brief and paths factory-context injects
      'message_end:assistant',
      'tool_start',
      'tool_end',
      'message_end:toolResult',
      'message_end:assistant',
      'session_shutdown',
    ]);
    for (const line of lines) {
      expect(line).toMatchObject({ session_id: run.sessionId, phase: 'build', role: 'builder', adw_id: 'a1b2c3d4' });
      expect(Number.isNaN(Date.parse(String(line.ts)))).toBe(false);
    }
    const at = (type: string) => lines.find((l) => l.type === type)!;
    expect(at('tool_start')).toMatchObject({ tool_name: 'bash', args: { command: 'echo traced' } });
    expect(at('tool_end')).toMatchObject({ tool_name: 'bash', is_error: false });
    const assistant = lines.find((l) => l.message_role === 'assistant')!;
    expect(assistant).toMatchObject({ stop_reason: 'toolUse', model: 'scripted/alpha' });
    expect((assistant.usage as { totalTokens: number }).totalTokens).toBeGreaterThan(0);
  });

  it('masks a `.env` value the node was not given, and a key it was, in the trace it writes', async () => {
    writeFileSync(path.join(project.dir, '.env'), `DENIED_SECRET=${DENIED}\nGIVEN_API_KEY=${GIVEN}\n`);
    try {
      const run = await runNode(rig, project, 'echo them [tape:denied]', nodeEnv(project, { GIVEN_API_KEY: GIVEN }));
      expect(run.exitCode).toBe(0);
      // pi did run the command with the values (the tool result says so): masking is the trace's, not a refusal.
      const bash = run.events.find((e) => e.type === 'tool_execution_end' && e.toolName === 'bash');
      expect(JSON.stringify(bash)).toContain(DENIED);
      const text = readFileSync(path.join(project.dataDir, 'traces', 'harness', `${run.sessionId}.jsonl`), 'utf8');
      expect(text).not.toContain(DENIED);
      expect(text).not.toContain(GIVEN);
      expect(text).toContain('echo «redacted:DENIED_SECRET» «redacted:GIVEN_API_KEY»');
    } finally {
      rmSync(path.join(project.dir, '.env'), { force: true });
    }
  });

  it('an unwritable trace folder never breaks the run', async () => {
    // A regular file where the data folder should be: mkdir fails even for root.
    const blocker = path.join(project.dir, 'data-is-a-file');
    writeFileSync(blocker, '');
    const run = await runNode(
      rig,
      project,
      'trace me [tape:unwritable]',
      nodeEnv(project, { FACTORY_DATA_DIR: blocker }),
    );
    const bash = run.events.find((e) => e.type === 'tool_execution_end' && e.toolName === 'bash');
    expect(bash?.isError).toBe(false);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).not.toMatch(/factory-obs|ENOTDIR/);
  });
});
