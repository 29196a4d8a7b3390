// An arm's lens: a best-of-N arm works in a worktree of its own, but the model sees it at the primer's path, so that
// every request of every arm begins with the primer's prompt byte for byte and a provider serves that prefix from
// its cache. The core names the primer's folder and cache-routing key in FACTORY_LENS ({"shown": <abs path>,
// "key": <primer session id>}). On the way out (before_provider_request) the arm's own folder is written as the
// primer's in the whole payload, and the routing key is the primer's; on the way in (tool_call) every path the model
// writes under the primer's folder is taken back to the arm's own before any guard judges the call. The model's
// world is the primer's folder; the files it touches are the arm's. Without FACTORY_LENS nothing changes.
import { realpathSync } from 'node:fs';
import path from 'node:path';

export const LENS_ENV = 'FACTORY_LENS';

export interface Lens {
  /** The folder the model is shown: the primer's. */
  shown: string;
  /** The folder the arm works in, as pi names it (first) and as the file system resolves it (when different). */
  real: string[];
  /** The primer's cache-routing key, when the core gave it. */
  key?: string;
}

/** The lens of an arm working in `cwd`, or undefined (no lens, a value that is not one, or the primer itself). */
export function lensOf(env: NodeJS.ProcessEnv, cwd: string): Lens | undefined {
  const raw = env[LENS_ENV];
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const { shown, key } = parsed as { shown?: unknown; key?: unknown };
  if (typeof shown !== 'string' || !path.isAbsolute(shown)) return undefined;
  const shownPath = path.resolve(shown);
  if (path.resolve(cwd) === shownPath) return undefined;
  const real = new Set([path.resolve(cwd)]);
  try {
    real.add(realpathSync(cwd));
  } catch {
    // A folder that cannot be resolved is named as pi names it.
  }
  real.delete(shownPath);
  return { shown: shownPath, real: [...real], ...(typeof key === 'string' && key !== '' ? { key } : {}) };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every occurrence of one of `from` that is a whole path (not the start of a longer name), written as `to`. */
function replacer(from: readonly string[], to: string): (text: string) => string {
  const pattern = new RegExp(`(?<![\\w.\\-/])(?:${from.map(escape).join('|')})(?![\\w.\\-])`, 'g');
  return (text) => (from.some((f) => text.includes(f)) ? text.replace(pattern, to) : text);
}

/** A copy of `value` with every string mapped; other values kept as they are. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, map);
    return out;
  }
  return value;
}

/** pi's own bound on an OpenAI prompt cache key: 64 code points. */
function clampKey(key: string): string {
  const chars = Array.from(key);
  return chars.length <= 64 ? key : chars.slice(0, 64).join('');
}

/** The provider payload as the model must see it: the arm's folder written as the primer's, the primer's routing key. */
export function presentPayload(payload: unknown, lens: Lens): unknown {
  const shown = mapStrings(payload, replacer(lens.real, lens.shown));
  if (
    lens.key &&
    shown &&
    typeof shown === 'object' &&
    typeof (shown as { prompt_cache_key?: unknown }).prompt_cache_key === 'string'
  ) {
    (shown as { prompt_cache_key: string }).prompt_cache_key = clampKey(lens.key);
  }
  return shown;
}

/** A tool call's input taken back to the arm's folder, in place (pi runs the call with the mutated input). */
export function realInput(input: Record<string, unknown>, lens: Lens): void {
  const map = replacer([lens.shown], lens.real[0]!);
  for (const [k, v] of Object.entries(input)) input[k] = mapStrings(v, map);
}
