import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BuildEnvelope,
  Envelope,
  EnvelopeError,
  REPORT_TOOL,
  contract,
  correction,
  extendEnvelope,
  extractEnvelopeObject,
  handoff,
  parse,
  schema,
  envelopeType,
} from '../../src/envelope/envelopes.js';

/** The motif parse() throws, or a marker when it does not throw. */
function motifOf(payload: unknown, type = Envelope as typeof Envelope | typeof BuildEnvelope): string {
  try {
    parse(payload, type);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeError);
    return (error as EnvelopeError).motif;
  }
  return '<accepted>';
}

describe('schema', () => {
  it('describes the base envelope: title, types, enum, descriptions, required, open to extra fields', () => {
    const s = schema(Envelope) as any;
    expect(s.title).toBe('Envelope');
    expect(s.type).toBe('object');
    expect(s.additionalProperties).toBe(true);
    expect(s.required).toEqual(['status']);
    expect(s.properties.status).toMatchObject({
      type: 'string',
      enum: ['success', 'fail'],
      description: "'success' when the phase reached its goal, else 'fail'",
    });
    expect(s.properties.artifacts).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(s.properties.summary.type).toBe('string');
    expect(s.properties.notes_for_next_agent.type).toBe('string');
    for (const name of Object.keys(Envelope.zod.shape)) expect(s.properties[name].description).toBeTruthy();
  });

  it('a subtype keeps the base fields and adds its own', () => {
    const s = schema(BuildEnvelope) as any;
    expect(s.title).toBe('BuildEnvelope');
    expect(Object.keys(s.properties)).toEqual([
      'status',
      'summary',
      'artifacts',
      'notes_for_next_agent',
      'changed_files',
    ]);
    expect(s.properties.changed_files).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(s.required).toEqual(['status']);
  });

  it('the ask texts of the contract are the schema descriptions (one source of truth)', () => {
    const s = schema(BuildEnvelope) as any;
    const text = contract(BuildEnvelope);
    for (const [name, prop] of Object.entries<any>(s.properties)) {
      expect(text).toContain(`"${name}": ${JSON.stringify(prop.description)}`);
    }
  });
});

describe('envelope types by title', () => {
  it('finds each type by its title and names the known ones otherwise', () => {
    expect(envelopeType('BuildEnvelope')).toBe(BuildEnvelope);
    expect(() => envelopeType('Nope')).toThrow(
      /unknown envelope type "Nope" \(known: Envelope, BuildEnvelope, JudgeEnvelope\)/,
    );
  });
});

describe('contract, correction, handoff', () => {
  it('contract names the tool, the call discipline, every field, and the JSON fallback without fence', () => {
    const text = contract(Envelope);
    expect(text).toContain(REPORT_TOOL);
    expect(text).toMatch(/call report_phase once, as the only tool call of your final message/);
    for (const name of ['status', 'summary', 'artifacts', 'notes_for_next_agent']) expect(text).toContain(`"${name}"`);
    expect(text).toMatch(
      /No report_phase tool in this session\? Then make this object, filled in, the last thing in your answer/,
    );
    expect(text).toMatch(/as plain JSON \(no code fence\)/);
    expect(contract(BuildEnvelope)).toContain('"changed_files"');
  });

  it('correction is the exact motif, then the contract, nothing else', () => {
    const motif = 'changed_files: array expected, string received';
    const text = correction(motif, BuildEnvelope);
    expect(text.startsWith(`The factory did not accept your last answer: ${motif}\n\n`)).toBe(true);
    expect(text.endsWith(contract(BuildEnvelope))).toBe(true);
    expect(text.length).toBe(
      `The factory did not accept your last answer: ${motif}\n\n`.length + contract(BuildEnvelope).length,
    );
  });

  it('handoff carries the previous envelope as pretty JSON under its heading', () => {
    const prev = { status: 'success', summary: 'déjà fait', changed_files: ['a.ts'] };
    const text = handoff(prev);
    expect(text.startsWith('### previous_envelope\n')).toBe(true);
    expect(text).toContain(JSON.stringify(prev, null, 2));
    expect(JSON.parse(text.slice(text.indexOf('{')))).toEqual(prev);
  });
});

describe('parse: a dict from the gate', () => {
  it('accepts a valid envelope, fills defaults and keeps extra fields', () => {
    const v = parse({ status: 'fail', extra: 42 }, Envelope);
    expect(v).toEqual({ status: 'fail', summary: '', artifacts: [], notes_for_next_agent: '', extra: 42 });
  });

  it('types the result of a subtype', () => {
    const v = parse({ status: 'success', changed_files: ['src/a.ts'] }, BuildEnvelope);
    const files: string[] = v.changed_files;
    expect(files).toEqual(['src/a.ts']);
  });

  it('wrong type → "<field>: <expected> expected, <kind> received"', () => {
    expect(motifOf({ status: 'success', changed_files: 'src/a.ts' }, BuildEnvelope)).toBe(
      'changed_files: array expected, string received',
    );
    expect(motifOf({ status: 'fail', summary: 3 })).toBe('summary: string expected, number received');
    expect(motifOf({ status: 'fail', artifacts: ['a', 7] })).toBe('artifacts[1]: string expected, number received');
    expect(motifOf({ status: 'fail', summary: null })).toBe('summary: string expected, null received');
  });

  it('missing required field → "status: required field missing"', () => {
    expect(motifOf({ summary: 'no status' })).toBe('status: required field missing');
  });

  it('enum violation → \'status: one of "success", "fail" expected, "ok" received\'', () => {
    expect(motifOf({ status: 'ok' })).toBe('status: one of "success", "fail" expected, "ok" received');
    expect(motifOf({ status: 1 })).toBe('status: one of "success", "fail" expected, 1 received');
  });

  it('several violations are joined on one line', () => {
    const motif = motifOf({ status: 'ok', changed_files: 'x' }, BuildEnvelope);
    expect(motif).toBe(
      'status: one of "success", "fail" expected, "ok" received; changed_files: array expected, string received',
    );
    expect(motif).not.toContain('\n');
  });

  it('invariant: a successful build declares at least one changed file', () => {
    expect(motifOf({ status: 'success', changed_files: [] }, BuildEnvelope)).toBe(
      'changed_files: a successful build must declare at least one changed file',
    );
    expect(motifOf({ status: 'success' }, BuildEnvelope)).toMatch(/at least one changed file/);
    expect(motifOf({ status: 'fail', changed_files: [] }, BuildEnvelope)).toBe('<accepted>');
  });

  it('a non-object payload is refused with its kind', () => {
    expect(motifOf(['status'])).toBe('envelope: object expected, array received');
    expect(motifOf(null)).toBe('envelope: object expected, null received');
    expect(motifOf(3)).toBe('envelope: object expected, number received');
  });

  it('a sub-subtype chains the invariants of its bases', () => {
    const Review = extendEnvelope(
      BuildEnvelope,
      'ReviewEnvelope',
      { findings: z.array(z.string()).default([]).describe('issues found') },
      (v) =>
        v.status === 'fail' && v.findings.length === 0
          ? 'findings: a failed review names at least one finding'
          : undefined,
    );
    expect((schema(Review) as any).properties.findings.description).toBe('issues found');
    expect(() => parse({ status: 'success', changed_files: [] }, Review)).toThrow(/at least one changed file/);
    expect(() => parse({ status: 'fail' }, Review)).toThrow('findings: a failed review names at least one finding');
    expect(parse({ status: 'fail', findings: ['x'] }, Review).findings).toEqual(['x']);
  });
});

describe('parse: a text (fallback path)', () => {
  it('braces in prose before the final object do not break extraction', () => {
    const text =
      'I set `const cfg = { theme: "dark" }` in the config.\n{"status": "success", "summary": "done", "changed_files": ["cfg.ts"]}';
    expect(parse(text, BuildEnvelope).changed_files).toEqual(['cfg.ts']);
  });

  it('the last balanced top-level object that parses wins', () => {
    const text = 'first {"status": "fail"} then {"status": "success", "summary": "final", "changed_files": ["x"]} bye';
    expect(parse(text, BuildEnvelope).summary).toBe('final');
  });

  it('braces and escaped quotes inside JSON strings do not unbalance the object', () => {
    const text =
      'Answer: {"status": "success", "summary": "use } and { and \\"quoted {\\" text", "changed_files": ["a"]}';
    expect(parse(text, BuildEnvelope).summary).toBe('use } and { and "quoted {" text');
  });

  it('a nested object is part of its parent, not a candidate of its own', () => {
    const text = 'Result {"status": "fail", "meta": {"k": 1}}';
    expect(parse(text, Envelope)).toMatchObject({ status: 'fail', meta: { k: 1 } });
  });

  it('a stray quote or an unclosed brace in prose does not hide the final object', () => {
    expect(parse('He said "hi {" and left { open\n{"status": "fail"}', Envelope).status).toBe('fail');
    expect(
      parse('unclosed { at the start {"status": "success", "changed_files": ["b"]}', BuildEnvelope).changed_files,
    ).toEqual(['b']);
  });

  it('an object inside a markdown fence is still found', () => {
    expect(parse('```json\n{"status": "fail"}\n```', Envelope).status).toBe('fail');
  });

  it('a found object is validated like a dict', () => {
    expect(motifOf('ok {"status": "ok"}')).toBe('status: one of "success", "fail" expected, "ok" received');
  });

  it('no JSON object → "no JSON object in the answer"', () => {
    expect(motifOf('All done, nothing to report.')).toBe('no JSON object in the answer');
    expect(motifOf('const cfg = { theme: "dark" }')).toBe('no JSON object in the answer');
    expect(motifOf('[1, 2, 3]')).toBe('no JSON object in the answer');
    expect(motifOf('')).toBe('no JSON object in the answer');
  });

  it.each([
    ['<tool_call>', '<tool_call>{"name": "report_phase", "arguments": {"status": "success"}}</tool_call>'],
    ['<function=', '<function=report_phase>{"status": "success"}</function>'],
    ['<invoke', '<invoke name="report_phase"><parameter name="status">success</parameter></invoke>'],
  ])('a tool call leaked as text (%s) is a precise contract failure', (marker, text) => {
    expect(motifOf(`Done.\n${text}`)).toBe(`report_phase was written as text (${marker}) instead of being called`);
  });

  it('extractEnvelopeObject returns the raw object', () => {
    expect(extractEnvelopeObject('x {"a": {"b": [1, {"c": "}"}]}} y')).toEqual({ a: { b: [1, { c: '}' }] } });
  });
});
