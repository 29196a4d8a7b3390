// Envelopes: the typed JSON an agent owes the code at the end of a phase.
// The zod object is the single source of truth: the contract text appended to asks, the JSON Schema
// behind pi's `report_phase` gate, and the validation of what comes back all read the same fields,
// so the ask can never drift from the check.

import * as z from '../contract/zod.js';
import { depthOf, nestedDeeperThan, objectSpans } from './scan.js';
import { clip, firstLine } from '../contract/errors.js';
import { formatPath, kindOf, lookup } from '../contract/zodIssues.js';

import { REPORT_TOOL } from '../contract/typedGate.js';
import { FactoryError } from '../contract/errors.js';

export { REPORT_TOOL };

/** Markers of a tool call an open model wrote as prose instead of calling the tool. */
export const LEAKED_TOOL_CALL_MARKERS = ['<tool_call>', '<function=', '<invoke '] as const;

/** A contract failure with its exact, one-line motif: the material of the correction ask. */
export class EnvelopeError extends FactoryError {
  constructor(readonly motif: string) {
    super(motif, 'verdict');
    this.name = 'EnvelopeError';
  }
}

/**
 * How much of an answer's end the text fallback reads. The envelope ends the answer and a real one is a few
 * thousand characters, so 256 Ki characters leave room for a large envelope and prose after it, while a model
 * that wrote junk up to its token limit costs one bounded scan on the cockpit's main thread.
 */
export const ENVELOPE_SCAN_MAX_CHARS = 256 * 1024;

/**
 * Deepest nesting of objects and arrays an envelope may have. Real envelopes use two or three levels; past 64,
 * recursive readers (JSON.stringify, zod, pretty-printing) start to cost more than the envelope is worth, and
 * far past it they overflow the stack.
 */
export const ENVELOPE_MAX_DEPTH = 64;

/** Spans the text fallback tries before giving up: a real answer needs one, two with a brace in trailing prose. */
export const ENVELOPE_MAX_CANDIDATES = 32;

/** Characters the tries may read in all (a try reads up to its span's length): a few windows, then give up. */
const PARSE_BUDGET_CHARS = 4 * ENVELOPE_SCAN_MAX_CHARS;

/**
 * Most characters of JSON the handoff carries into the next ask (~8k tokens): a real envelope is far smaller,
 * and the next agent's context is not the place for a runaway one.
 */
export const HANDOFF_MAX_CHARS = 32 * 1024;

const TOO_DEEP = `envelope: nested deeper than ${ENVELOPE_MAX_DEPTH} levels`;

/** An envelope type: a title (the schema title and file name), a loose zod object, an optional invariant. */
export interface EnvelopeType<T = Record<string, unknown>> {
  readonly title: string;
  /** A loose zod object: its shape gives the contract's fields, its output is the parsed envelope. */
  readonly zod: z.ZodType<T> & { readonly shape: z.ZodRawShape };
  // Method syntax on purpose: parameters of methods are bivariant, so a BuildEnvelope type is still
  // accepted where any EnvelopeType is expected.
  /** A rule the schema cannot express; returns the motif when it is broken. */
  invariant?(value: T): string | undefined;
}

/** The parsed value of an envelope type. */
export type EnvelopeOf<E> = E extends EnvelopeType<infer T> ? T : never;

type LooseOutput<S extends z.ZodRawShape> = z.output<z.ZodObject<S, z.core.$loose>>;

/**
 * Declares an envelope type. Objects are loose so that a subtype passes the base gate untruncated
 * (extra fields travel through and are judged here, in code).
 */
export function defineEnvelope<S extends z.ZodRawShape>(
  title: string,
  shape: S,
  invariant?: (value: LooseOutput<S>) => string | undefined,
): EnvelopeType<LooseOutput<S>> {
  return { title, zod: z.looseObject(shape).meta({ title }), invariant };
}

/** Declares a subtype: the base's fields plus new ones; the base invariant is checked first. */
export function extendEnvelope<T, S extends z.ZodRawShape>(
  base: EnvelopeType<T>,
  title: string,
  shape: S,
  invariant?: (value: T & LooseOutput<S>) => string | undefined,
): EnvelopeType<T & LooseOutput<S>> {
  const zod = z.looseObject({ ...base.zod.shape, ...shape }).meta({ title }) as unknown as EnvelopeType<
    T & LooseOutput<S>
  >['zod'];
  const chained = (value: T & LooseOutput<S>): string | undefined => base.invariant?.(value) ?? invariant?.(value);
  return { title, zod, invariant: chained };
}

export const Envelope = defineEnvelope('Envelope', {
  status: z.enum(['success', 'fail']).describe("'success' when the phase reached its goal, else 'fail'"),
  summary: z.string().default('').describe('what this phase did or found, in a sentence'),
  artifacts: z
    .array(z.string())
    .default([])
    .describe('files you produced for the phases after this one (paths), or []'),
  notes_for_next_agent: z.string().default('').describe("anything the agent after you needs to know, or ''"),
});
export type Envelope = EnvelopeOf<typeof Envelope>;

export const BuildEnvelope = extendEnvelope(
  Envelope,
  'BuildEnvelope',
  {
    changed_files: z
      .array(z.string())
      .default([])
      .describe('every file you added or changed, as a path from the repository root; [] when none'),
  },
  (value) =>
    value.status === 'success' && value.changed_files.length === 0
      ? 'changed_files: a successful build must declare at least one changed file'
      : undefined,
);
export type BuildEnvelope = EnvelopeOf<typeof BuildEnvelope>;

/** A best-of-N judge's answer: the green arms it was shown, best first, each with its reason. */
export const JudgeEnvelope = extendEnvelope(
  Envelope,
  'JudgeEnvelope',
  {
    ranking: z
      .array(
        z.strictObject({
          arm: z.number().int().positive().describe('the arm number, as its patch was headed'),
          reason: z.string().describe('why it stands here, in one sentence'),
        }),
      )
      .default([])
      .describe('every green arm you were shown exactly once, the best first'),
  },
  (value) =>
    value.status === 'success' && value.ranking.length === 0
      ? 'ranking: a successful judgement must rank the arms it was shown'
      : undefined,
);
export type JudgeEnvelope = EnvelopeOf<typeof JudgeEnvelope>;

/** Every envelope type by title: ADWs name their envelope, the catalog and the parser look it up here. */
export const ENVELOPE_TYPES: Record<string, EnvelopeType<unknown>> = {
  Envelope,
  BuildEnvelope,
  JudgeEnvelope,
} as Record<string, EnvelopeType<unknown>>;

export function envelopeType(title: string): EnvelopeType<unknown> {
  const type = ENVELOPE_TYPES[title];
  if (!type)
    throw new Error(
      `unknown envelope type ${JSON.stringify(title)} (known: ${Object.keys(ENVELOPE_TYPES).join(', ')})`,
    );
  return type;
}

// ---------- schema ----------

/** The JSON Schema of `report_phase` for this type (input view: fields with defaults are optional). */
export function schema(type: EnvelopeType<unknown>): Record<string, unknown> {
  const generated = z.toJSONSchema(type.zod, { io: 'input' }) as Record<string, unknown>;
  // `$schema` is kept: pi 0.85.1 accepts it (checked, see NOTES). zod writes `additionalProperties: {}`
  // for a loose object; `true` says the same thing in the form every validator and reader expects.
  return { ...generated, title: type.title, type: 'object', additionalProperties: true };
}

// ---------- contract, correction, handoff ----------

function asks(type: EnvelopeType<unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(type.zod.shape))
    out[name] = z.globalRegistry.get(field)?.description ?? '';
  return out;
}

/** The text appended to every ask: one contract whatever the harness (tool when present, JSON otherwise). */
export function contract(type: EnvelopeType<unknown>): string {
  return [
    `To finish, call ${REPORT_TOOL} once, as the only tool call of your final message, with these fields and no others:`,
    JSON.stringify(asks(type), null, 2),
    `No ${REPORT_TOOL} tool in this session? Then make this object, filled in, the last thing in your answer, ` +
      'as plain JSON (no code fence).',
  ].join('\n');
}

/** The live-session retry ask: the exact motif, then the contract, nothing else. */
export function correction(motif: string, type: EnvelopeType<unknown>): string {
  return `The factory did not accept your last answer: ${motif}\n\n${contract(type)}`;
}

/** The handoff block that carries the previous phase's envelope into the next ask, at most HANDOFF_MAX_CHARS of it. */
export function handoff(previous: Record<string, unknown>): string {
  return `### previous_envelope\n\n${bounded(handoffJson(previous), HANDOFF_MAX_CHARS)}`;
}

/**
 * Pretty JSON when it fits the handoff, compact JSON otherwise, so that an envelope whose compact JSON fits is
 * always handed over whole. Pretty-printing repeats the indentation on every line, so its size grows with the
 * depth: it is only tried when its worst size (each value on a line indented to the full depth) is a few
 * handoffs, and nothing is stringified that is too deep to stringify without a stack overflow.
 */
function handoffJson(previous: Record<string, unknown>): string {
  try {
    const depth = depthOf(previous, ENVELOPE_MAX_DEPTH);
    if (depth > ENVELOPE_MAX_DEPTH)
      return `(not shown: the previous envelope is nested deeper than ${ENVELOPE_MAX_DEPTH} levels)`;
    const compact = JSON.stringify(previous) as string | undefined;
    if (compact === undefined) return '(not shown: the previous envelope is not JSON)';
    if (compact.length * (2 * depth + 2) > 4 * HANDOFF_MAX_CHARS) return compact;
    const pretty = JSON.stringify(previous, null, 2);
    return pretty.length <= HANDOFF_MAX_CHARS ? pretty : compact;
  } catch (error) {
    return `(not shown: the previous envelope cannot be written as JSON: ${thrownMotif(error)})`;
  }
}

/** `text` cut to `max` characters (never inside a surrogate pair), the cut announced on a line of its own. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  const cut = high >= 0xd800 && high <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, cut)}\n… (truncated: ${cut} of ${text.length} characters)`;
}

// ---------- parse ----------

/** How long a received value may be in a motif: enough to recognise it, never a whole answer. */
const SHOWN_MAX = 80;

/** The value as JSON, clipped; JSON.stringify leaves NEL and U+2028/9 raw, so they are escaped to keep one line. */
function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? kindOf(value);
  return clip(
    json.replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    SHOWN_MAX,
  );
}

function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  const where = formatPath(issue.path, 'envelope');
  const { found, value } = lookup(data, issue.path);
  if (!found || value === undefined) return `${where}: required field missing`;
  if (issue.code === 'invalid_type') return `${where}: ${issue.expected} expected, ${kindOf(value)} received`;
  if (issue.code === 'invalid_value') {
    return `${where}: one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} expected, ${shown(value)} received`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * Validates an envelope: a dict (from the gate) directly, a text through extraction. Throws EnvelopeError and
 * nothing else, whatever the payload: anything thrown inside (a stack overflow, a throwing getter, an invariant
 * gone wrong) becomes a one-line motif, since the caller turns motifs into a correction ask.
 */
export function parse<T>(payload: unknown, type: EnvelopeType<T>): T {
  try {
    return validate(payload, type);
  } catch (error) {
    if (error instanceof EnvelopeError) throw error;
    throw new EnvelopeError(`envelope could not be checked: ${thrownMotif(error)}`);
  }
}

function validate<T>(payload: unknown, type: EnvelopeType<T>): T {
  const data = typeof payload === 'string' ? extractEnvelopeObject(payload) : payload;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new EnvelopeError(`envelope: object expected, ${kindOf(data)} received`);
  }
  // Before zod: what passes here is shallow enough for any recursive reader after it (zod, the trace's
  // JSON.stringify, the handoff).
  if (depthOf(data, ENVELOPE_MAX_DEPTH) > ENVELOPE_MAX_DEPTH) throw new EnvelopeError(TOO_DEEP);
  const result = type.zod.safeParse(data);
  if (!result.success)
    throw new EnvelopeError(result.error.issues.map((issue) => describeIssue(issue, data)).join('; '));
  const broken = type.invariant?.(result.data);
  if (broken) throw new EnvelopeError(broken);
  return result.data;
}

function thrownMotif(error: unknown): string {
  try {
    return (
      firstLine(error instanceof Error ? `${error.name}: ${error.message}` : String(error), SHOWN_MAX) ||
      'unknown error'
    );
  } catch {
    return 'unknown error';
  }
}

/**
 * Text fallback: the last balanced top-level JSON object of the text that parses, read from the answer's last
 * ENVELOPE_SCAN_MAX_CHARS characters. One scan lists every balanced `{…}` span (see objectSpans); they are tried
 * by decreasing end, which meets the last top-level object that parses first (an enclosing span ends later and
 * is tried before its inner objects, which only count when it does not parse). The tries are bounded in number
 * and in characters read, so the whole costs a small multiple of the text's length, whatever the text.
 */
export function extractEnvelopeObject(text: string): Record<string, unknown> {
  for (const marker of LEAKED_TOOL_CALL_MARKERS) {
    if (text.includes(marker)) {
      throw new EnvelopeError(`${REPORT_TOOL} was written as text (${marker.trim()}) instead of being called`);
    }
  }
  const cut = text.length > ENVELOPE_SCAN_MAX_CHARS;
  const window = cut ? text.slice(text.length - ENVELOPE_SCAN_MAX_CHARS) : text;
  const { opens, closes, count } = objectSpans(window);
  let budget = PARSE_BUDGET_CHARS;
  for (let k = count - 1, tried = 0; k >= 0; k--, tried++) {
    const start = opens[k]!;
    const end = closes[k]!;
    if (tried === ENVELOPE_MAX_CANDIDATES || end - start + 1 > budget) {
      throw new EnvelopeError(`no JSON object in the answer (stopped after ${tried} candidates that do not parse)`);
    }
    budget -= end - start + 1;
    if (nestedDeeperThan(window, start, end, ENVELOPE_MAX_DEPTH)) throw new EnvelopeError(TOO_DEEP);
    const value = tryParse(window.slice(start, end + 1));
    if (value !== undefined) return value;
  }
  throw new EnvelopeError(
    cut
      ? `no JSON object in the last ${ENVELOPE_SCAN_MAX_CHARS} characters of the answer`
      : 'no JSON object in the answer',
  );
}

function tryParse(candidate: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(candidate);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
