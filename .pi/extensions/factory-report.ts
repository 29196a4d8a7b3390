// factory-report: the typed gate. Registers the terminal tool `report_phase` whose parameters are the
// envelope JSON Schema the core wrote before the phase (path in FACTORY_ENVELOPE_SCHEMA). A valid call
// ends the run (terminate: true, no further model call) and hands the envelope to the core through
// `tool_execution_end.result.details`. An invalid call goes back to the model as a tool error carrying
// one exact motif per violation, the same wording the core's own parser uses.
//
// Only `import type` from pi at the top: the pure helpers below are imported by vitest on Node 20,
// where pi's runtime cannot load.
import { readFileSync } from 'node:fs';
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { REPORT_TOOL } from '../lib/contract.js';
import { joinSocle } from '../lib/socle.js';

export const EXTENSION_NAME = 'factory-report';
export const TOOL_NAME = REPORT_TOOL;
export const SCHEMA_ENV = 'FACTORY_ENVELOPE_SCHEMA';

/** The part of JSON Schema an envelope schema (zod's toJSONSchema) uses. */
export interface JsonSchema {
  $schema?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
}

// ---------------------------------------------------------------------------------------------
// Loading: an unreadable or malformed schema must stop pi at load (exit 1, message on stderr), never
// leave a node that silently has no gate.

export function loadEnvelopeSchema(file: string): JsonSchema {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${EXTENSION_NAME}: cannot read envelope schema ${file} (${(error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${EXTENSION_NAME}: envelope schema ${file} is not JSON (${(error as Error).message})`);
  }
  const problem = schemaProblem(parsed);
  if (problem) throw new Error(`${EXTENSION_NAME}: envelope schema ${file} is invalid: ${problem}`);
  return parsed as JsonSchema;
}

/** Why a value cannot serve as the envelope schema, or null when it can. */
export function schemaProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a JSON object expected';
  const schema = value as JsonSchema;
  if (schema.type !== 'object') return `"type": "object" expected, ${JSON.stringify(schema.type)} found`;
  if (!schema.properties || typeof schema.properties !== 'object') return '"properties" object expected';
  if (schema.required !== undefined && !Array.isArray(schema.required)) return '"required" must be an array';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Validation: one motif per violation, `<path>: <what> expected, <what> received`.

export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value; // string, number, boolean, object (undefined never comes out of JSON)
}

function matchesType(value: unknown, type: string): boolean {
  const actual = jsonTypeOf(value);
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return actual === type;
}

function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!match) return undefined;
  const table = match[1] === '$defs' ? root.$defs : root.definitions;
  return table?.[match[2]];
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function label(path: string): string {
  return path === '' ? 'envelope' : path;
}

function check(root: JsonSchema, schema: JsonSchema, value: unknown, path: string, out: string[]): void {
  if (schema.$ref) {
    const target = resolveRef(root, schema.$ref);
    if (target) check(root, target, value, path, out);
    return;
  }
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const passes = branches.some((branch) => validateNode(root, branch, value, path).length === 0);
    if (!passes) {
      const kinds = branches.map((b) => (b.type ? [b.type].flat().join('|') : 'value')).join(' or ');
      out.push(`${label(path)}: ${kinds} expected, ${jsonTypeOf(value)} received`);
      return;
    }
  }
  if (schema.type !== undefined) {
    const types = [schema.type].flat();
    if (!types.some((t) => matchesType(value, t))) {
      out.push(`${label(path)}: ${types.join(' or ')} expected, ${jsonTypeOf(value)} received`);
      return;
    }
  }
  if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
    out.push(
      `${label(path)}: one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')} expected, ${JSON.stringify(value)} received`,
    );
    return;
  }
  if ('const' in schema && schema.const !== value) {
    out.push(`${label(path)}: ${JSON.stringify(schema.const)} expected, ${JSON.stringify(value)} received`);
    return;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      out.push(`${label(path)}: at least ${schema.minLength} characters expected, ${value.length} received`);
    }
    if (schema.maxLength !== undefined && value.length > schema.maxLength) {
      out.push(`${label(path)}: at most ${schema.maxLength} characters expected, ${value.length} received`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      out.push(`${label(path)}: at least ${schema.minItems} items expected, ${value.length} received`);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      out.push(`${label(path)}: at most ${schema.maxItems} items expected, ${value.length} received`);
    }
    if (schema.items)
      value.forEach((item, i) => check(root, schema.items as JsonSchema, item, `${label(path)}[${i}]`, out));
  }
  if (jsonTypeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) {
      if (!(name in record)) out.push(`${join(path, name)}: required field missing`);
    }
    for (const [name, field] of Object.entries(record)) {
      const sub = properties[name];
      if (sub) check(root, sub, field, join(path, name), out);
      else if (schema.additionalProperties === false) out.push(`${join(path, name)}: unexpected field`);
      else if (typeof schema.additionalProperties === 'object') {
        check(root, schema.additionalProperties, field, join(path, name), out);
      }
    }
  }
}

function validateNode(root: JsonSchema, schema: JsonSchema, value: unknown, path: string): string[] {
  const out: string[] = [];
  check(root, schema, value, path, out);
  return out;
}

/** Every violation of `params` against `schema`, one exact motif each; [] when valid. */
export function validateAgainstSchema(schema: JsonSchema, params: unknown): string[] {
  return validateNode(schema, schema, params, '');
}

/** The text the model reads when its envelope is refused. */
export function refusal(violations: string[]): string {
  return `${TOOL_NAME} refused: ${violations.join('; ')}. Call ${TOOL_NAME} again with the fields corrected.`;
}

/** The tool description the model reads: built from the schema, one line per field. */
export function describeGate(schema: JsonSchema): string {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, field]) => {
    const type = field.enum
      ? field.enum.map((v) => JSON.stringify(v)).join(' | ')
      : [field.type ?? 'any'].flat().join('|');
    const note = field.description ? ` — ${field.description}` : '';
    return `- ${name}${required.has(name) ? ' (required)' : ''}: ${type}${note}`;
  });
  return [
    `Hands this phase's result to the factory as a ${schema.title ?? 'Envelope'}.`,
    `Your work in the phase stops with this call, so make it once, by itself, after everything else.`,
    'Fields:',
    ...fields,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------

export default function factoryReport(pi: ExtensionAPI): void {
  const file = process.env[SCHEMA_ENV];
  if (file) {
    const schema = loadEnvelopeSchema(file);
    pi.registerTool({
      name: TOOL_NAME,
      label: 'Report phase',
      description: describeGate(schema),
      promptSnippet: `${TOOL_NAME}: hand the phase's result to the factory (your final action)`,
      promptGuidelines: [
        `End the phase with a single ${TOOL_NAME} call that is the only tool call of its message; nothing comes after it.`,
      ],
      // pi compiles this plain JSON Schema and shows it to the model as the tool's parameters.
      parameters: schema as never,
      // Runs before pi's own schema check: a refused envelope gets our exact motifs, not a generic
      // validator dump. Throwing here is how pi turns it into an `isError: true` result.
      prepareArguments(args: unknown) {
        const violations = validateAgainstSchema(schema, args);
        if (violations.length > 0) throw new Error(refusal(violations));
        return args as never;
      },
      async execute(_toolCallId, params) {
        // Second look: pi coerces some values during its own validation; the envelope the core reads
        // must still satisfy the schema exactly.
        const violations = validateAgainstSchema(schema, params);
        if (violations.length > 0) throw new Error(refusal(violations));
        return {
          content: [{ type: 'text', text: 'The factory has your report. The phase is over: do nothing more.' }],
          details: params as Record<string, unknown>,
          terminate: true,
        };
      },
    });
  }
  // Joined even without a schema: the extension is loaded, it just has no gate to open outside a phase.
  joinSocle(EXTENSION_NAME);
}
