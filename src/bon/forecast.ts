// The spend forecast of a fan-out, pure: from what the primer's own model calls weighed (their prompts, answers and
// growth) and the routes' prices, what each arm should cost before it starts. An arm forks the primer's context, so
// its first call resends that whole context: read from the cache when the arm runs on a model whose cache already
// holds it (the primer's, or a model whose first arm has asked), full price for the first arm on any other model.
// Each later call resends the previous prompt (cached) plus what is new since (the last answer and tool results).
// An arm is reckoned to make as many model calls as the primer made; the range is half as many to twice as many.
import type { SpendForecast } from '../events.js';
import type { ModelPrices } from '../harness/types.js';
import type { CallUsage } from '../pi/stream.js';

export interface ForecastInput {
  /** The primer's model calls, in order. */
  calls: readonly CallUsage[];
  /** What the primer cost in all. */
  primerCost: number;
  primerModel?: string;
  /** The arms to come, with their routes. */
  arms: ReadonlyArray<{ arm: number; model?: string }>;
  /** Prices per million tokens by route; a route without one is priced as the primer's calls were. */
  prices: ReadonlyMap<string, ModelPrices>;
  /** The arm's ask, in tokens: the only new text of its first call. */
  askTokens: number;
}

const promptOf = (c: CallUsage) => c.input + c.cacheRead + c.cacheWrite;

/** Prices the primer's calls imply: what they cost over what they weighed, all input at one price. */
function impliedPrices(calls: readonly CallUsage[], cost: number): ModelPrices {
  const tokens = calls.reduce((sum, c) => sum + promptOf(c) + c.output, 0);
  const perToken = tokens > 0 ? (cost / tokens) * 1e6 : 0;
  return { input: perToken, output: perToken, cacheRead: perToken };
}

/** The shape of one arm's work, reckoned from the primer's calls (tokens). */
export function armShape(calls: readonly CallUsage[], askTokens: number): { context: number; growth: number; output: number; calls: number } {
  const last = calls.at(-1);
  if (!last) return { context: askTokens, growth: askTokens, output: askTokens, calls: 1 };
  const output = calls.reduce((sum, c) => sum + c.output, 0) / calls.length;
  const first = calls[0]!;
  // What each arm call adds to the next one's prompt: its answer and what its tools returned. The primer's own growth
  // is mostly files it read, which an arm (told not to read them again) does not repeat: an arm's call is reckoned to
  // add about twice an answer (the answer, then a tool result of its size), never more than the primer's calls did.
  const primerGrowth = calls.length > 1 ? (promptOf(last) - promptOf(first)) / (calls.length - 1) : 2 * output;
  const growth = Math.max(1, Math.min(primerGrowth, 2 * output));
  return { context: promptOf(last) + last.output, growth, output, calls: calls.length };
}

/** The cost in dollars of an arm making `n` calls of this shape at these prices; `warm`: its first prompt is cached. */
export function armCost(shape: ReturnType<typeof armShape>, prices: ModelPrices, n: number, askTokens: number, warm: boolean): number {
  let usd = 0;
  let prompt = shape.context + askTokens;
  for (let k = 0; k < n; k += 1) {
    const fresh = k === 0 ? (warm ? askTokens : prompt) : shape.growth;
    const cached = prompt - fresh;
    usd += (cached * prices.cacheRead + fresh * prices.input + shape.output * prices.output) / 1e6;
    prompt += shape.growth;
  }
  return usd;
}

export function forecastFanOut(input: ForecastInput): SpendForecast {
  const shape = armShape(input.calls, input.askTokens);
  const fallback = impliedPrices(input.calls, input.primerCost);
  const warmModels = new Set<string | undefined>([input.primerModel]);
  const perArm = input.arms.map(({ arm, model }) => {
    const prices = (model && input.prices.get(model)) || fallback;
    // The first arm on a model pays the shared context in full; the prefix gate makes the others wait for it.
    const warm = warmModels.has(model);
    warmModels.add(model);
    const at = (n: number) => round(armCost(shape, prices, n, input.askTokens, warm));
    return { arm, ...(model ? { model } : {}), low: at(Math.max(1, Math.ceil(shape.calls / 2))), mid: at(shape.calls), high: at(shape.calls * 2) };
  });
  const sum = (key: 'low' | 'mid' | 'high') => round(input.primerCost + perArm.reduce((s, a) => s + a[key], 0));
  return {
    arms: perArm.length,
    perArm,
    total: { low: sum('low'), mid: sum('mid'), high: sum('high') },
    primer: input.primerCost,
    basis: `each arm resends the primer's ${Math.round(shape.context)}-token context (cached on a model that has it) over ~${shape.calls} call(s), ${Math.ceil(shape.calls / 2)}–${shape.calls * 2} for the range`,
  };
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
