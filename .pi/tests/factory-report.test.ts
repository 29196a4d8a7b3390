import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, report, say } from '../../src/scripted/tape.js';
import { lastAssistant, type Rig } from '../../test/helpers/rig.js';
import {
  describeGate,
  loadEnvelopeSchema,
  refusal,
  schemaProblem,
  validateAgainstSchema,
  type JsonSchema,
} from '../extensions/factory-report.js';
import {
  ENVELOPE_SCHEMA,
  makeNodeProject,
  nodeEnv,
  resultText,
  runNode,
  startNodeRig,
  toolEnds,
  type NodeProject,
} from './helpers/node-rig.js';

const schema = ENVELOPE_SCHEMA as JsonSchema;

describe('validateAgainstSchema', () => {
  it('accepts a valid envelope, extra fields included (additionalProperties)', () => {
    expect(validateAgainstSchema(schema, { status: 'success', changed_files: ['a.ts'], findings: [1] })).toEqual([]);
  });

  it('gives one exact motif per violation', () => {
    expect(validateAgainstSchema(schema, { status: 'success', changed_files: 'a.ts' })).toEqual([
      'changed_files: array expected, string received',
    ]);
    expect(validateAgainstSchema(schema, { changed_files: [] })).toEqual(['status: required field missing']);
    expect(validateAgainstSchema(schema, { status: 'done', changed_files: ['a', 2], summary: null })).toEqual([
      'status: one of "success", "fail" expected, "done" received',
      'changed_files[1]: string expected, number received',
      'summary: string expected, null received',
    ]);
  });

  it('refuses a non-object envelope and unexpected fields when the schema closes them', () => {
    expect(validateAgainstSchema(schema, ['status'])).toEqual(['envelope: object expected, array received']);
    const closed: JsonSchema = { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false };
    expect(validateAgainstSchema(closed, { a: 1.5, b: true })).toEqual([
      'a: integer expected, number received',
      'b: unexpected field',
    ]);
  });

  it('follows nullable unions and local $refs', () => {
    const s: JsonSchema = {
      type: 'object',
      properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }] }, item: { $ref: '#/$defs/Item' } },
      $defs: { Item: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } },
    };
    expect(validateAgainstSchema(s, { note: null, item: { id: 'x' } })).toEqual([]);
    expect(validateAgainstSchema(s, { note: 3, item: {} })).toEqual([
      'note: string or null expected, number received',
      'item.id: required field missing',
    ]);
  });

  it('words the refusal for the model', () => {
    expect(refusal(['a: x'])).toBe('report_phase refused: a: x. Call report_phase again with the fields corrected.');
    expect(describeGate(schema)).toContain('- status (required): "success" | "fail" — success or fail');
  });
});

describe('loadEnvelopeSchema', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'factory-report-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a schema file and names the file when it cannot', () => {
    const good = path.join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(schema));
    expect(loadEnvelopeSchema(good).title).toBe('BuildEnvelope');
    expect(() => loadEnvelopeSchema(path.join(dir, 'nope.json'))).toThrow(/cannot read envelope schema .*nope\.json/);
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{ "type": ');
    expect(() => loadEnvelopeSchema(broken)).toThrow(/broken\.json is not JSON/);
    const array = path.join(dir, 'array.json');
    writeFileSync(array, '{"type": "array"}');
    expect(() => loadEnvelopeSchema(array)).toThrow(/array\.json is invalid: "type": "object" expected/);
  });

  it('says why a value is not an envelope schema', () => {
    expect(schemaProblem(null)).toBe('a JSON object expected');
    expect(schemaProblem({ type: 'object' })).toBe('"properties" object expected');
    expect(schemaProblem(schema)).toBeNull();
  });
});

describe('report_phase in the real pi', () => {
  let rig: Rig;
  let project: NodeProject;
  const valid = { status: 'success', summary: 'done', changed_files: ['src/a.ts'], extra_note: 'kept' };

  beforeAll(async () => {
    rig = await startNodeRig({
      valid: [call('bash', { command: 'true' }), report(valid), say('must never be requested')],
      invalid: [report({ status: 'success', changed_files: 'src/a.ts' }), say('corrected later')],
      plain: [say('no gate here')],
    });
    project = makeNodeProject();
  });
  afterAll(async () => {
    project?.cleanup();
    await rig?.cleanup();
  });

  it('a valid envelope ends the run: details = the envelope, stopReason toolUse, no further model call', async () => {
    const run = await runNode(rig, project, 'build it [tape:valid]');
    const [end] = toolEnds(run.events, 'report_phase');
    expect(end?.isError).toBe(false);
    expect((end?.result as { details?: unknown }).details).toEqual(valid);
    expect(lastAssistant(run.events)?.stopReason).toBe('toolUse');
    expect(rig.model.requestsFor('valid')).toHaveLength(2);
  });

  it('an invalid envelope comes back to the model as an error with the exact motif', async () => {
    const run = await runNode(rig, project, 'build it [tape:invalid]');
    const [end] = toolEnds(run.events, 'report_phase');
    expect(end?.isError).toBe(true);
    expect(resultText(end)).toContain('changed_files: array expected, string received');
    // Not terminal: the model is asked again and can correct itself in the same turn.
    expect(rig.model.requestsFor('invalid')).toHaveLength(2);
  });

  it('without FACTORY_ENVELOPE_SCHEMA there is no report_phase tool', async () => {
    const { FACTORY_ENVELOPE_SCHEMA: _omitted, ...env } = nodeEnv(project);
    await runNode(rig, project, 'hello [tape:plain]', env);
    const [request] = rig.model.requestsFor('plain');
    const offered = (request?.body.tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name);
    expect(offered).toContain('bash');
    expect(offered).not.toContain('report_phase');
  });

  it('an unreadable schema stops pi at load: exit 1, the reason on stderr, nothing on stdout', async () => {
    const run = await runNode(
      rig,
      project,
      'build it',
      nodeEnv(project, { FACTORY_ENVELOPE_SCHEMA: path.join(project.dir, 'missing.json') }),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('factory-report: cannot read envelope schema');
    expect(run.events).toEqual([]);
  });
});
