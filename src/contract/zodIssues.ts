// Shared words for zod issues: the envelope parser and the roster validator both name the field's path and the
// value found there in one line (`agents.builder.tools[2]: …`, `changed_files: array expected, string received`).

/** `array`, `null`, `NaN`, `Infinity`, or the typeof name: how a received value is named in a motif. */
export function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value); // YAML's `.nan`, `.inf`: numbers to typeof
  return typeof value;
}

/**
 * Characters that would break a one-line motif or reorder it on screen: C0, DEL, C1, the Unicode line and
 * paragraph separators, and the bidirectional controls.
 */
export const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_CHARS_ALL = new RegExp(UNSAFE_CHARS.source, 'g');

/** A string in double quotes with every unsafe character escaped: JSON.stringify leaves DEL, C1 and U+2028 raw. */
export function quote(text: string): string {
  return JSON.stringify(text).replace(UNSAFE_CHARS_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// What a pasted credential looks like: a provider's key prefix, or a long run mixing letters and digits.
const KEY_PREFIX =
  /(?:^|[^A-Za-z0-9])(?:(?:sk|pk|rk)-|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|hf_|AKIA[0-9A-Z]{8}|AIza[0-9A-Za-z_-]{8})/;
const MIXED_RUN = /[A-Za-z0-9]{16,}/g;
const LONG_RUN = /[A-Za-z0-9+=]{40,}/;

function looksSecret(text: string): boolean {
  if (KEY_PREFIX.test(text) || LONG_RUN.test(text)) return true;
  return (text.match(MIXED_RUN) ?? []).some((run) => /[0-9]/.test(run) && /[A-Za-z]/.test(run));
}

/**
 * A received value as a motif may show it: numbers and booleans as written; a short string quoted, unless it
 * looks like a credential (someone may paste a key where a model id or a path belongs, and motifs reach logs);
 * anything else by its kind only.
 */
export function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    if (value.length <= 64 && !looksSecret(value)) return quote(value);
    return `a ${value.length}-character text (not shown)`;
  }
  return kindOf(value);
}

const PLAIN_SEGMENT = /^[A-Za-z0-9_$-]+$/;

/**
 * `agents.builder.tools[2]`; `root` names the whole document when the path is empty. Odd keys are quoted (so
 * a key never breaks the line), and a key that looks like a credential is not shown (it was pasted there).
 */
export function formatPath(path: readonly PropertyKey[], root: string): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const text = String(key);
      const name = looksSecret(text) ? '(a key not shown)' : PLAIN_SEGMENT.test(text) ? text : quote(text);
      out += out ? `.${name}` : name;
    }
  }
  return out || root;
}

/** zod 4 does not keep the input on its issues: look the offending value up again (own properties only). */
export function lookup(data: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let current: unknown = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key))
      return { found: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: current };
}
