// Fuzzing the envelope parser: thousands of generated answers and payloads, each reproducible from the seed and
// its iteration (FUZZ_SEED=<seed> replays a failure). The invariants: parse returns a validated envelope or
// throws an EnvelopeError with a one-line motif, never anything else; a valid envelope after any junk is found;
// the handoff stays bounded.
import { describe, expect, it } from 'vitest';
import { LINE_BREAK } from '../../src/contract/errors.js';
import {
  BuildEnvelope,
  Envelope,
  EnvelopeError,
  HANDOFF_MAX_CHARS,
  handoff,
  parse,
  type EnvelopeType,
} from '../../src/envelope/envelopes.js';
import { fuzz, type Gen } from '../helpers/fuzz.js';

/** Pieces of text a model writes around (and instead of) an envelope: JSON syntax, prose, every line break. */
const PIECES = [
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  '\\"',
  ':',
  ',',
  ' ',
  '\n',
  '\r\n',
  '\u2028',
  '\u0085',
  'a',
  'ok',
  '1',
  '-2.5e3',
  'true',
  'null',
  '"status"',
  '"success"',
  '"fail"',
  '"summary"',
  '"changed_files"',
  '"artifacts"',
  '["a.ts"]',
  '{}',
  '[]',
  '😀',
  '\ud83d',
  'é',
  '```json',
  '<tool_call>',
  '<function=',
  '<tool',
  'call>',
  '{"status": "fail"}',
  '{"status": "success", "changed_files": ["x"]}',
  '{"a": {"b": [1, {"c": "}"}]}}',
];

/** Junk with no brace, so it can follow an envelope without making a span of its own. */
const TRAILING = ['a', ' ', '\n', '.', '"', "'", ']', '\\', 'done', '😀', '\u2028'];

const STRING_PIECES = ['a', 'b', ' ', '"', '\\', '{', '}', '[', ']', '\n', '\t', '\u2028', 'é', '😀', '</', '\u0000'];

const HEADING = '### previous_envelope\n\n';

const TYPES: EnvelopeType<Record<string, unknown>>[] = [Envelope, BuildEnvelope];

function junk(g: Gen, max: number): string {
  return g.text(g.int(max), PIECES);
}

/** Checks the one contract of parse: a value the schema accepts, or an EnvelopeError with a one-line motif. */
function parsesOrRefuses(payload: unknown, type: EnvelopeType<Record<string, unknown>>): void {
  let value: unknown;
  try {
    value = parse(payload, type);
  } catch (error) {
    if (!(error instanceof EnvelopeError))
      throw new Error(`threw ${(error as Error)?.name}: ${(error as Error)?.message}`);
    if (error.motif === '' || LINE_BREAK.test(error.motif))
      throw new Error(`motif not one line: ${JSON.stringify(error.motif)}`);
    return;
  }
  if (!type.zod.safeParse(value).success) throw new Error(`returned an invalid envelope: ${JSON.stringify(value)}`);
}

/** A random JSON-like value up to `depth` levels, sometimes deeper than any envelope may go. */
function value(g: Gen, depth: number): unknown {
  if (depth <= 0 || g.chance(0.35))
    return g.pick<unknown>([null, true, 0, -1, 1e308, 'fail', 'success', g.text(g.int(8), STRING_PIECES)]);
  if (g.chance(0.05)) {
    let deep: unknown = [];
    for (let i = g.int(200); i > 0; i -= 1) deep = [deep];
    return deep;
  }
  const size = g.int(4);
  if (g.chance(0.5)) return Array.from({ length: size }, () => value(g, depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < size; i += 1)
    out[g.pick(['status', 'summary', 'artifacts', 'changed_files', 'x', g.text(3, 'abc')])] = value(g, depth - 1);
  return out;
}

/** A valid envelope of the type, with strings full of quotes, braces, escapes and line breaks. */
function envelope(g: Gen, build: boolean): Record<string, unknown> {
  const str = () => g.text(g.int(20), STRING_PIECES);
  const out: Record<string, unknown> = { status: build ? 'success' : g.pick(['success', 'fail']) };
  if (g.chance(0.7)) out.summary = str();
  if (g.chance(0.5)) out.artifacts = Array.from({ length: g.int(3) }, str);
  if (g.chance(0.5)) out.notes_for_next_agent = str();
  if (build) out.changed_files = Array.from({ length: 1 + g.int(3) }, str);
  if (g.chance(0.3)) out.meta = { nested: { list: [str(), { deeper: str() }] } };
  return out;
}

describe('fuzz: envelope parser', () => {
  it('arbitrary text: a validated envelope or an EnvelopeError, nothing else', () => {
    fuzz(
      'parse(text)',
      2000,
      (g) => ({ text: junk(g, 120), type: g.int(TYPES.length) }),
      ({ text, type }) => parsesOrRefuses(text, TYPES[type]!),
    );
  });

  it('arbitrary dicts and values from the gate: a validated envelope or an EnvelopeError', () => {
    fuzz(
      'parse(dict)',
      2000,
      (g) => ({ payload: value(g, 5), type: g.int(TYPES.length) }),
      ({ payload, type }) => parsesOrRefuses(payload, TYPES[type]!),
    );
  });

  it('a valid envelope after any junk (on its own line) and before brace-free trailing text is found whole', () => {
    fuzz(
      'extraction',
      1500,
      (g) => {
        const build = g.chance(0.5);
        const env = envelope(g, build);
        const json = g.chance(0.5) ? JSON.stringify(env, null, 2) : JSON.stringify(env);
        // The contract asks for the object at the end; a leaked tool-call marker in the junk is a motif of its own.
        const before = junk(g, 60).replaceAll('<tool', '').replaceAll('<function=', '').replaceAll('<invoke ', '');
        return { text: `${before}\n${json}${g.text(g.int(30), TRAILING)}`, env, build };
      },
      ({ text, env, build }) => {
        const type = build ? BuildEnvelope : Envelope;
        expect(parse(text, type)).toEqual(type.zod.parse(env));
      },
    );
  });

  it('handoff never throws and stays bounded, whole when small', () => {
    const bound = HEADING.length + HANDOFF_MAX_CHARS + 64;
    fuzz(
      'handoff',
      1500,
      (g) => {
        const previous: Record<string, unknown> = { status: 'fail', x: value(g, 6) };
        if (g.chance(0.1)) previous.notes_for_next_agent = 'n'.repeat(g.int(3 * HANDOFF_MAX_CHARS));
        return previous;
      },
      (previous) => {
        const text = handoff(previous);
        expect(text.length).toBeLessThanOrEqual(bound);
        // Whenever its compact JSON fits, the envelope is handed over whole (pretty or compact).
        if (text.includes('(not shown')) return;
        const compact = JSON.stringify(previous);
        if (compact.length <= HANDOFF_MAX_CHARS)
          expect(JSON.parse(text.slice(HEADING.length))).toEqual(JSON.parse(compact));
        else expect(text).toMatch(/\n… \(truncated: \d+ of \d+ characters\)$/);
      },
    );
  });
});
