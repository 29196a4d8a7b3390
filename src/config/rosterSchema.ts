// The roster's zod schema and its one-line motifs. Kept apart from roster.ts on purpose: zod costs ~50 ms to
// import, and a repository without a roster file must never pay it (roster.ts imports this module lazily).
import * as z from '../contract/zod.js';
import { REPORT_TOOL } from '../contract/typedGate.js';
import { formatPath, kindOf, lookup, quote, shown } from '../contract/zodIssues.js';
import { isModelId } from './routes.js';
import { parseDuration } from '../contract/duration.js';
import {
  AGENT_KEYS,
  AUTH_KEYS,
  BON_KEYS,
  COMMAND_KEYS,
  CONTEXT_KEYS,
  KNOWN_TOOLS,
  LIMIT_KEYS,
  PAYLOAD_KEYS,
  RESERVED_NAMES,
  ROLE_PATTERN,
  ROSTER_KEYS,
  THINKING_LEVELS,
} from './rosterVocabulary.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GATEWAY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const seconds = z
  .number()
  .positive()
  .max(7 * 24 * 3600);
const positiveInt = z.number().int().positive();
const modelId = z.string().refine(isModelId, { message: 'model id must be provider/id (e.g. z-ai/glm-5.3)' });

/** Relative, inside the workspace: the payload folder is joined to the workspace root. */
function insideWorkspace(dir: string): boolean {
  if (dir.trim() === '' || dir.startsWith('/') || /^[A-Za-z]:[\\/]/.test(dir) || dir.startsWith('\\')) return false;
  const parts = dir.split(/[\\/]+/);
  let depth = 0;
  for (const part of parts) {
    if (part === '..') depth -= 1;
    else if (part !== '.' && part !== '') depth += 1;
    if (depth < 0) return false;
  }
  return true;
}

const command = z.preprocess(
  (value) => (typeof value === 'string' ? { run: value } : value),
  z.strictObject({
    run: z.string().refine((s) => s.trim() !== '', { message: 'empty command' }),
    timeout: seconds.optional(),
  }),
);

const agent = z.strictObject({
  model: modelId.optional(),
  thinking: z.enum(THINKING_LEVELS).optional(),
  tools: z.array(z.enum(KNOWN_TOOLS)).optional(),
  timeout: seconds.optional(),
  limits: z
    .strictObject({
      max_turns: positiveInt.optional(),
      max_tool_calls: positiveInt.optional(),
      max_cost_usd: z.number().positive().optional(),
    })
    .optional(),
  // Key names index the environment (`env[name]`): one an object inherits would read a member, not a variable.
  auth: z
    .strictObject({
      keys: z
        .array(
          z
            .string()
            .regex(ENV_NAME)
            .refine((s) => !RESERVED_NAMES.has(s)),
        )
        .optional(),
      direct: z.boolean().optional(),
    })
    .optional(),
  writable: z
    .array(z.string().refine((s) => s.trim() !== '' && !s.includes(','), { message: 'a path (no comma) expected' }))
    .optional(),
});

const RosterSchema = z.strictObject({
  gateway: z
    .string()
    .refine((s) => s === '' || GATEWAY.test(s), {
      message: 'a provider name expected (e.g. openrouter), or "" for none',
    })
    .optional(),
  harness: z.enum(['pi', 'claude']).optional(),
  pi: z
    .string()
    .refine((s) => s.trim() !== '' && !/[\r\n]/.test(s), { message: 'a pi executable (path or name) expected' })
    .optional(),
  fallback_model: modelId.optional(),
  payload: z
    .strictObject({
      dir: z
        .string()
        .refine(insideWorkspace, { message: 'a folder inside the workspace (relative to its root) expected' })
        .optional(),
      commands: z.array(command).optional(),
      // Run in each best-of-N worktree before its arm starts (an install): a string or {run, timeout}.
      setup: command.optional(),
    })
    .optional(),
  context: z
    .strictObject({ prune_turns: positiveInt.optional(), prune_kb: z.number().positive().optional() })
    .optional(),
  // Best-of-N spend and race defaults (dollars; a duration such as "20m"); the command line's flags win.
  bon: z
    .strictObject({
      max_cost: z.number().positive().optional(),
      arm_max_cost: z.number().positive().optional(),
      confirm_above: z.number().positive().optional(),
      stop_after_green: positiveInt.optional(),
      deadline: z
        .string()
        .refine((s) => parseDuration(s) !== undefined, { message: 'a duration expected (e.g. 90s, 20m, 1h30m)' })
        .optional(),
      judge: z.boolean().optional(),
    })
    .optional(),
  agents: z.record(z.string().regex(ROLE_PATTERN), agent).optional(),
});

export type RawRoster = z.infer<typeof RosterSchema>;

/** The keys an object at `path` accepts, so an unknown key's motif can name the right ones. */
function knownKeysAt(path: readonly PropertyKey[]): readonly string[] {
  const [head, , third] = path;
  if (path.length === 0) return ROSTER_KEYS;
  if (head === 'payload' && path.length === 1) return PAYLOAD_KEYS;
  if (head === 'payload') return COMMAND_KEYS; // a command of `commands`, or `setup`
  if (head === 'context') return CONTEXT_KEYS;
  if (head === 'bon') return BON_KEYS;
  if (head === 'agents' && path.length === 2) return AGENT_KEYS;
  if (head === 'agents' && third === 'limits') return LIMIT_KEYS;
  if (head === 'agents' && third === 'auth') return AUTH_KEYS;
  return [];
}

function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  const path = issue.path;
  const where = formatPath(path, 'roster');
  const { found, value } = lookup(data, path);
  const last = path.at(-1);
  const parent = path.at(-2);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => shown(k)).join(', ');
    const known = knownKeysAt(path);
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}${known.length ? ` (known: ${known.join(', ')})` : ''}`;
  }
  if (issue.code === 'invalid_key' && path[0] === 'agents') {
    return `${where}: role names are lower-case words (letters, digits, - and _), got ${shown(String(last))}`;
  }
  if (path[0] === 'agents' && parent === 'keys' && typeof value === 'string' && RESERVED_NAMES.has(value)) {
    return `${where}: ${quote(value)} is a reserved name (it collides with JavaScript object internals), not an environment variable`;
  }
  // Never echo what sits in auth.keys: someone may have pasted a key's value where its NAME belongs.
  if (path[0] === 'agents' && parent === 'keys' && typeof value === 'string') {
    return `${where}: an environment variable NAME expected (e.g. OPENROUTER_API_KEY), never a key's value`;
  }
  if (!found || value === undefined) return `${where}: required field missing`;
  if (issue.code === 'invalid_value' && parent === 'tools') {
    if (value === REPORT_TOOL) return `${where}: report_phase is added by the factory, do not list it`;
    return `${where}: unknown tool ${shown(value)} (known: ${KNOWN_TOOLS.join(', ')})`;
  }
  if (issue.code === 'invalid_value' && last === 'thinking') {
    return `${where}: unknown thinking level ${shown(value)} (known: ${THINKING_LEVELS.join(', ')})`;
  }
  if (issue.code === 'invalid_value') {
    return `${where}: one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} expected, ${shown(value)} received`;
  }
  if (issue.code === 'invalid_type') {
    if (path[0] === 'payload' && parent === 'commands')
      return `${where}: a command string or {run, timeout} expected, ${kindOf(value)} received`;
    // zod 4 says `int` for a fraction where a whole number belongs: said as people say it, with the value.
    if (issue.expected === 'int' && typeof value === 'number')
      return `${where}: a whole number expected, got ${shown(value)}`;
    const expected = issue.expected === 'record' || issue.expected === 'object' ? 'mapping' : issue.expected;
    return `${where}: ${expected} expected, ${kindOf(value)} received`;
  }
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    if (issue.code === 'too_small' && Number(issue.minimum) === 0)
      return `${where}: a positive number expected, got ${shown(value)}`;
    return `${where}: ${issue.message.replace(/^Too (small|big): expected number to be /, 'must be ')}, got ${shown(value)}`;
  }
  if (issue.code === 'custom') return `${where}: ${issue.message}, got ${shown(value)}`;
  return `${where}: ${issue.message}`;
}

/** Validates parsed YAML. The motif is one line: the first problem (with its path), and how many others. */
export function validateRoster(data: unknown): { ok: true; roster: RawRoster } | { ok: false; motif: string } {
  const result = RosterSchema.safeParse(data);
  if (result.success) return { ok: true, roster: result.data };
  const [first, ...rest] = result.error.issues;
  const more = rest.length ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  return { ok: false, motif: `${describeIssue(first as z.core.$ZodIssue, data)}${more}` };
}
