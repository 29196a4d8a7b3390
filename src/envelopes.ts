// Envelopes: the typed JSON an agent owes the code at the end of a phase.
// The zod object is the single source of truth: the contract text appended to asks, the JSON Schema
// behind pi's `report_phase` gate, and the validation of what comes back all read the same fields,
// so the ask can never drift from the check.

import { z } from 'zod';
import { formatPath, kindOf, lookup } from './zodIssues.js';

import { REPORT_TOOL } from './gate.js';

export { REPORT_TOOL };

/** Markers of a tool call an open model wrote as prose instead of calling the tool. */
export const LEAKED_TOOL_CALL_MARKERS = ['<tool_call>', '<function=', '<invoke '] as const;

/** A contract failure with its exact, one-line motif: the material of the correction ask. */
export class EnvelopeError extends Error {
  constructor(readonly motif: string) {
    super(motif);
    this.name = 'EnvelopeError';
  }
}

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
  const zod = z.looseObject({ ...base.zod.shape, ...shape }).meta({ title }) as unknown as EnvelopeType<T & LooseOutput<S>>['zod'];
  const chained = (value: T & LooseOutput<S>): string | undefined => base.invariant?.(value) ?? invariant?.(value);
  return { title, zod, invariant: chained };
}

export const Envelope = defineEnvelope('Envelope', {
  status: z.enum(['success', 'fail']).describe("'success' or 'fail'"),
  summary: z.string().default('').describe('one sentence: what you did or found'),
  artifacts: z.array(z.string()).default([]).describe('paths of the files you wrote for the next steps, [] if none'),
  notes_for_next_agent: z.string().default('').describe("what the next agent must know, '' if nothing"),
});
export type Envelope = EnvelopeOf<typeof Envelope>;

export const BuildEnvelope = extendEnvelope(
  Envelope,
  'BuildEnvelope',
  {
    changed_files: z
      .array(z.string())
      .default([])
      .describe('repo-relative paths of every file you created or modified, [] if none'),
  },
  (value) =>
    value.status === 'success' && value.changed_files.length === 0
      ? 'changed_files: a successful build must declare at least one changed file'
      : undefined,
);
export type BuildEnvelope = EnvelopeOf<typeof BuildEnvelope>;

/** Every envelope type by title: ADWs name their envelope, the catalog and the parser look it up here. */
export const ENVELOPE_TYPES: Record<string, EnvelopeType<unknown>> = { Envelope, BuildEnvelope } as Record<string, EnvelopeType<unknown>>;

export function envelopeType(title: string): EnvelopeType<unknown> {
  const type = ENVELOPE_TYPES[title];
  if (!type) throw new Error(`unknown envelope type ${JSON.stringify(title)} (known: ${Object.keys(ENVELOPE_TYPES).join(', ')})`);
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
  for (const [name, field] of Object.entries(type.zod.shape)) out[name] = z.globalRegistry.get(field)?.description ?? '';
  return out;
}

/** The text appended to every ask: one contract whatever the harness (tool when present, JSON otherwise). */
export function contract(type: EnvelopeType<unknown>): string {
  return [
    `When you are done, call the tool ${REPORT_TOOL} — alone, last, exactly once — with exactly these fields:`,
    JSON.stringify(asks(type), null, 2),
    `If the tool ${REPORT_TOOL} does not exist in your session, end your answer with this JSON object, ` +
      'filled in, without any markdown fence around it.',
  ].join('\n');
}

/** The live-session retry ask: the exact motif, then the contract, nothing else. */
export function correction(motif: string, type: EnvelopeType<unknown>): string {
  return `Your previous answer was refused: ${motif}\n\n${contract(type)}`;
}

/** The handoff block that carries the previous phase's envelope into the next ask. */
export function handoff(previous: Record<string, unknown>): string {
  return `### previous_envelope\n\n${JSON.stringify(previous, null, 2)}`;
}

// ---------- parse ----------


function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  const where = formatPath(issue.path, 'envelope');
  const { found, value } = lookup(data, issue.path);
  if (!found || value === undefined) return `${where}: required field missing`;
  if (issue.code === 'invalid_type') return `${where}: ${issue.expected} expected, ${kindOf(value)} received`;
  if (issue.code === 'invalid_value') {
    return `${where}: one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} expected, ${JSON.stringify(value)} received`;
  }
  return `${where}: ${issue.message}`;
}

/** Validates an envelope: a dict (from the gate) directly, a text through extraction. Throws EnvelopeError. */
export function parse<T>(payload: unknown, type: EnvelopeType<T>): T {
  const data = typeof payload === 'string' ? extractEnvelopeObject(payload) : payload;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new EnvelopeError(`envelope: object expected, ${kindOf(data)} received`);
  }
  const result = type.zod.safeParse(data);
  if (!result.success) throw new EnvelopeError(result.error.issues.map((issue) => describeIssue(issue, data)).join('; '));
  const broken = type.invariant?.(result.data);
  if (broken) throw new EnvelopeError(broken);
  return result.data;
}

/**
 * Text fallback: the last balanced top-level JSON object of the text that parses. Each candidate is
 * scanned from its own `{` with a fresh string state, so quotes and braces in prose before it cannot
 * shift it; a candidate that parses is skipped whole (its inner objects are not top-level).
 */
export function extractEnvelopeObject(text: string): Record<string, unknown> {
  for (const marker of LEAKED_TOOL_CALL_MARKERS) {
    if (text.includes(marker)) {
      throw new EnvelopeError(`${REPORT_TOOL} was written as text (${marker.trim()}) instead of being called`);
    }
  }
  let found: Record<string, unknown> | undefined;
  let start = text.indexOf('{');
  while (start !== -1) {
    const end = matchingBrace(text, start);
    let next = start + 1;
    if (end !== -1) {
      const value = tryParse(text.slice(start, end + 1));
      if (value !== undefined) {
        found = value;
        next = end + 1;
      }
    }
    start = text.indexOf('{', next);
  }
  if (!found) throw new EnvelopeError('no JSON object in the answer');
  return found;
}

/** Index of the `}` closing the `{` at `open`, skipping JSON strings and their escapes; -1 if unclosed. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */) depth++;
    else if (c === 0x7d /* } */ && --depth === 0) return i;
  }
  return -1;
}

function tryParse(candidate: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(candidate);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
