// The linear-time readers behind the envelope text fallback and its depth bounds. Each is one pass, with an
// explicit stack where it needs one and never recursion, so neither the length nor the nesting of a model's
// answer can make them quadratic or overflow the call stack.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Every balanced `{…}` span of the text, in the order of their closing brace, found in one pass with a stack of
 * open braces. Braces inside JSON strings (escapes included) do not count. Two rules keep prose from shifting
 * what follows it: a quote outside every brace is prose, not the start of a string (JSON strings only live
 * inside an object), and a string ends at a line break (JSON strings never hold a raw one), so a stray quote
 * swallows at most the rest of its line.
 */
export function objectSpans(text: string): { opens: Int32Array; closes: Int32Array; count: number } {
  // Typed arrays sized once: a text holds no more open braces, nor spans, than characters, and growing plain
  // arrays to hundreds of thousands of entries costs more than the scan itself.
  const stack = new Int32Array(text.length);
  const opens = new Int32Array(text.length >> 1);
  const closes = new Int32Array(text.length >> 1);
  let depth = 0;
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) {
        const next = text.charCodeAt(i + 1);
        if (next !== LF && next !== CR) i++;
      } else if (c === QUOTE || c === LF || c === CR) inString = false;
    } else if (c === QUOTE) inString = depth > 0;
    else if (c === OPEN) stack[depth++] = i;
    else if (c === CLOSE && depth > 0) {
      opens[count] = stack[--depth]!;
      closes[count++] = i;
    }
  }
  return { opens, closes, count };
}

/** Whether the span [start, end] nests objects and arrays deeper than `limit`; reads no further than it must. */
export function nestedDeeperThan(text: string, start: number, end: number, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = start; i <= end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/**
 * Nesting depth of the objects and arrays in `root` (a scalar is 0, `{}` is 1), walked with an explicit stack so
 * that no depth can overflow the call stack; it stops as soon as it passes `limit`. Each object is visited once,
 * so shared or cyclic references cost no more than the objects themselves.
 */
export function depthOf(root: unknown, limit: number): number {
  let deepest = 0;
  const values: unknown[] = [root];
  const depths: number[] = [1];
  const seen = new Set<object>();
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (value === null || typeof value !== 'object' || seen.has(value)) continue;
    if (depth > limit) return depth;
    seen.add(value);
    deepest = Math.max(deepest, depth);
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return deepest;
}
