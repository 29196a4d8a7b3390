// Hostile answers: what a model can write until its token limit, and payloads no honest gate sends. Every one is
// refused with an EnvelopeError and its one-line motif, quickly (the scan is linear: a regression to the old
// quadratic search would take minutes on these 1 MB inputs, so the duration of this file shows it; no timing is
// asserted here, the bench P8 measures the growth).
import { describe, expect, it } from 'vitest';
import { LINE_BREAK } from '../../src/contract/errors.js';
import {
  BuildEnvelope,
  ENVELOPE_MAX_CANDIDATES,
  ENVELOPE_MAX_DEPTH,
  ENVELOPE_SCAN_MAX_CHARS,
  Envelope,
  EnvelopeError,
  HANDOFF_MAX_CHARS,
  handoff,
  parse,
} from '../../src/envelope/envelopes.js';

const MB = 1024 * 1024;
const HEADING = '### previous_envelope\n\n';

function motifOf(payload: unknown, type = Envelope as typeof Envelope | typeof BuildEnvelope): string {
  try {
    parse(payload, type);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeError);
    const motif = (error as EnvelopeError).motif;
    expect(LINE_BREAK.test(motif)).toBe(false);
    return motif;
  }
  return '<accepted>';
}

const nested = (open: string, close: string, depth: number, inner = '') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** A value nested `depth` levels deep, built without recursion. */
function deepArray(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i += 1) value = [value];
  return value;
}

describe('parse: adversarial text', () => {
  it.each([
    ['`{` repeated', '{'.repeat(MB)],
    ['`{"` repeated', '{"'.repeat(MB / 2)],
    ['`{"a":` repeated', '{"a":'.repeat(MB / 5)],
    ['nested invalid braces', nested('{x', '}', MB / 4)],
    ['nested valid objects', nested('{"a":', '}', MB / 6, '1')],
    ['deep arrays in an object', `{"status":"fail","x":${nested('[', ']', 100_000)}}`],
    ['escapes and quotes', '{"\\'.repeat(MB / 3)],
    ['closing braces', '}'.repeat(MB)],
    ['many small spans that do not parse', '{x}'.repeat(MB / 3)],
  ])('%s (about 1 MB) is an EnvelopeError', (_name, text) => {
    expect(motifOf(text)).not.toBe('<accepted>');
  });

  it('nesting is bounded before JSON.parse: 64 levels pass, 65 are refused with a precise motif', () => {
    const at = (depth: number) => `{"status":"fail","x":${nested('[', ']', depth - 1)}}`;
    expect(motifOf(at(ENVELOPE_MAX_DEPTH))).toBe('<accepted>');
    expect(motifOf(at(ENVELOPE_MAX_DEPTH + 1))).toBe(`envelope: nested deeper than ${ENVELOPE_MAX_DEPTH} levels`);
    expect(motifOf(`done.\n${at(100_000)}`)).toBe(`envelope: nested deeper than ${ENVELOPE_MAX_DEPTH} levels`);
  });

  it('only the end of a long answer is read: an envelope after 1 MB of junk is found, one before it is not', () => {
    const junk = 'x{ "y'.repeat(MB / 5);
    expect(parse(`${junk}\n{"status": "fail", "summary": "at the end"}`, Envelope).summary).toBe('at the end');
    const tail = 'z'.repeat(ENVELOPE_SCAN_MAX_CHARS);
    expect(motifOf(`{"status": "fail"}${tail}`)).toBe(
      `no JSON object in the last ${ENVELOPE_SCAN_MAX_CHARS} characters of the answer`,
    );
  });

  it('the number of tries is bounded: spans that do not parse after the envelope end the search', () => {
    const envelope = '{"status": "fail", "summary": "mine"}';
    expect(parse(`${envelope} ${'{x} '.repeat(ENVELOPE_MAX_CANDIDATES - 1)}`, Envelope).summary).toBe('mine');
    expect(motifOf(`${envelope} ${'{x} '.repeat(ENVELOPE_MAX_CANDIDATES)}`)).toBe(
      `no JSON object in the answer (stopped after ${ENVELOPE_MAX_CANDIDATES} candidates that do not parse)`,
    );
  });

  it('a stray quote in prose is prose: outside braces, and never past the end of its line', () => {
    expect(parse('The file "a.ts is done: {"status": "fail", "summary": "s"}', Envelope).summary).toBe('s');
    expect(parse('left { open with a "stray quote\n{"status": "fail", "summary": "t"}', Envelope).summary).toBe('t');
  });

  it('an enclosing prose span that does not parse gives way to the object inside it', () => {
    expect(parse('I wrote { this: {"status": "fail", "summary": "inner"} } and stopped.', Envelope).summary).toBe(
      'inner',
    );
  });
});

describe('parse: hostile dicts', () => {
  it('a deep value in any field is refused by depth, not by a stack overflow', () => {
    const deep = deepArray(100_000);
    expect(motifOf({ status: deep })).toBe(`envelope: nested deeper than ${ENVELOPE_MAX_DEPTH} levels`);
    expect(motifOf({ status: 'fail', extra: deep })).toBe(`envelope: nested deeper than ${ENVELOPE_MAX_DEPTH} levels`);
    expect(motifOf({ status: 'fail', extra: deepArray(ENVELOPE_MAX_DEPTH - 1) })).toBe('<accepted>');
  });

  it('whatever throws inside becomes a one-line EnvelopeError', () => {
    const trap = {
      status: 'fail',
      get summary(): string {
        throw new RangeError('boom\nsecond line');
      },
    };
    expect(motifOf(trap)).toBe('envelope could not be checked: RangeError: boom');
    const broken = {
      ...BuildEnvelope,
      invariant: () => {
        throw new TypeError('invariant\u2028bug');
      },
    };
    expect(motifOf({ status: 'fail' }, broken as typeof BuildEnvelope)).toBe(
      'envelope could not be checked: TypeError: invariant',
    );
    expect(motifOf({ status: 10n })).toMatch(/^envelope could not be checked: TypeError: /);
  });

  it('a received value is shown clipped, never a whole answer', () => {
    const motif = motifOf({ status: 'x'.repeat(10_000) });
    expect(motif.startsWith('status: one of "success", "fail" expected, "xxx')).toBe(true);
    expect(motif.length).toBeLessThan(200);
  });
});

describe('handoff: bounded', () => {
  it('a large envelope is cut to HANDOFF_MAX_CHARS and the cut is announced', () => {
    const text = handoff({ status: 'fail', notes_for_next_agent: 'n'.repeat(MB) });
    expect(text.startsWith(HEADING)).toBe(true);
    expect(text).toMatch(/\n… \(truncated: 32768 of \d+ characters\)$/);
    expect(text.length).toBeLessThan(HEADING.length + HANDOFF_MAX_CHARS + 64);
  });

  it('a legal envelope nested to the limit does not blow up into pretty-printed megabytes', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < ENVELOPE_MAX_DEPTH - 2; i += 1) value = [value, 'abcdefgh', 'ijklmnop', 'qrstuvwx'];
    const text = handoff({ status: 'fail', x: value });
    expect(text.length).toBeLessThan(HEADING.length + HANDOFF_MAX_CHARS + 64);
    expect(JSON.parse(text.slice(HEADING.length))).toEqual({ status: 'fail', x: value });
  });

  it('a value too deep, cyclic or not JSON is named, never thrown', () => {
    expect(handoff({ x: deepArray(200_000) })).toBe(
      `${HEADING}(not shown: the previous envelope is nested deeper than ${ENVELOPE_MAX_DEPTH} levels)`,
    );
    const cyclic: Record<string, unknown> = { status: 'fail' };
    cyclic.self = cyclic;
    expect(handoff(cyclic)).toMatch(
      /^### previous_envelope\n\n\(not shown: the previous envelope cannot be written as JSON: TypeError: /,
    );
    expect(handoff({ n: 1n })).toMatch(/cannot be written as JSON: TypeError: /);
  });

  it('a cut never splits a surrogate pair', () => {
    const text = handoff({ s: '😀'.repeat(HANDOFF_MAX_CHARS) });
    const body = text.slice(0, text.lastIndexOf('\n…'));
    expect(/[\ud800-\udbff]$/.test(body)).toBe(false);
  });
});
