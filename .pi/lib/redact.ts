// The redactor: secret values out of every line the factory shows or stores (logs, --json, traces, screen).
// One implementation for both sides of the process boundary: the cockpit builds it once per run from
// `secretEntries` (src/config/env.ts); factory-obs builds it inside pi from what the node can know (its own env and the
// project's `.env`). The per-call cost is one scan with a precompiled pattern. Imports nothing, like contract.ts.

export interface NamedSecret {
  name: string;
  value: string;
}

export type Redactor = (text: string) => string;

/** Shorter values are ignored: redacting `true` or `1234` everywhere would wreck every line and hide nothing. */
export const MIN_SECRET_LENGTH = 6;

const REGEX_META = /[.*+?^${}()|[\]\\/-]/g;

function escapeRegex(value: string): string {
  return value.replace(REGEX_META, '\\$&');
}

/** The forms a value takes once written into a JSON string (a trace record, a --json line). */
function variants(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  return json === value ? [value] : [value, json];
}

/**
 * A function replacing every occurrence of every secret: named ones by `«redacted:NAME»`, bare ones by `***`.
 * Longest values first, so a secret that is a prefix of another never leaves the other's tail visible.
 */
export function createRedactor(
  secrets: ReadonlyArray<string | NamedSecret>,
  opts: { minLength?: number } = {},
): Redactor {
  const minLength = opts.minLength ?? MIN_SECRET_LENGTH;
  const replacement = new Map<string, string>();
  for (const secret of secrets) {
    const { name, value } = typeof secret === 'string' ? { name: undefined, value: secret } : secret;
    if (value.length < minLength) continue;
    const mask = name ? `«redacted:${name}»` : '***';
    for (const form of variants(value)) {
      // A named mask wins over a bare one for the same value.
      if (!replacement.has(form) || (name && replacement.get(form) === '***')) replacement.set(form, mask);
    }
  }
  if (replacement.size === 0) return (text) => text;
  const forms = [...replacement.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(forms.map(escapeRegex).join('|'), 'g');
  // A line without any secret (the common case) costs one scan and no allocation.
  return (text) => {
    if (typeof text !== 'string' || text.length === 0) return text;
    pattern.lastIndex = 0;
    if (!pattern.test(text)) return text;
    pattern.lastIndex = 0;
    return text.replace(pattern, (match) => replacement.get(match) ?? '***');
  };
}

/** A copy of a JSON-like value with every string redacted (for --json output and trace records). */
export function redactDeep<T>(redact: Redactor, value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactDeep(redact, item)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[redact(key)] = redactDeep(redact, item);
    return out as T;
  }
  return value;
}

/**
 * One JSONL line with its strings redacted. Masking the serialized text would also hit numbers (a 6-digit PIN
 * inside a timestamp) and break the JSON, so a line that holds a match is parsed and its strings masked; a line
 * without one comes back as the same string, and one that is not JSON (torn) is masked as text.
 */
export function redactJsonLine(redact: Redactor, line: string): string {
  if (redact(line) === line) return line;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return redact(line);
  }
  return JSON.stringify(redactDeep(redact, value));
}
