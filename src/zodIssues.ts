// Shared words for zod issues: the envelope parser and the roster validator both name the field's path and the
// value found there in one line (`agents.builder.tools[2]: …`, `changed_files: array expected, string received`).

/** `array`, `null`, or the typeof name: how a received value is named in a motif. */
export function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}

/** `agents.builder.tools[2]`; `root` names the whole document when the path is empty. */
export function formatPath(path: readonly PropertyKey[], root: string): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${String(key)}` : String(key);
  return out || root;
}

/** zod 4 does not keep the input on its issues: look the offending value up again. */
export function lookup(data: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let current: unknown = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !(key in current)) return { found: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: current };
}
