// The spend forecast of a fan-out, pure: from what the primer's own model calls weighed (their prompts, answers and
// growth) and the routes' prices, what each arm should cost before it starts. An arm forks the primer's context, so
// its first call resends that whole context: read from the cache when the arm runs on a model whose cache already
// holds it (the primer's, or a model whose first arm has asked), full price for the first arm on any other model.
// Each later call resends the previous prompt (cached) plus what is new since (the last answer and tool results).
// What an arm then does is read, strongest sign first, from the arms of this repo's past runs (factory.db): each past
// arm's calls are replayed on today's context (its growth and answers, today's prices): the middle is their median,
// the range their spread. With no past arm, an arm is reckoned to make three calls more than the primer (six at
// least) and to run the payload's tests twice (their output, as the baseline saw it, grows every later prompt); the
// range is two calls and no test run, to sixteen calls or three times the primer's and four test runs.
import type { SpendForecast } from '../../contract/events.js';
import type { ModelPrices } from '../../harness/types.js';
import type { CallUsage } from '../../contract/agent.js';

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
  /** Arms of this repo's past runs, newest first (../../trace/pastArms.ts): their model calls in order. */
  history?: ReadonlyArray<{ model?: string; calls: readonly CallUsage[] }>;
  /** What one run of the payload's tests prints, in tokens (the baseline's output): a tool result an arm reads. */
  testOutputTokens?: number;
}

const promptOf = (c: CallUsage) => c.input + c.cacheRead + c.cacheWrite;

/** Prices the primer's calls imply: what they cost over what they weighed, all input at one price. */
function impliedPrices(calls: readonly CallUsage[], cost: number): ModelPrices {
  const tokens = calls.reduce((sum, c) => sum + promptOf(c) + c.output, 0);
  const perToken = tokens > 0 ? (cost / tokens) * 1e6 : 0;
  return { input: perToken, output: perToken, cacheRead: perToken };
}

/** The shape of one arm's work, reckoned from the primer's calls (tokens). */
export function armShape(
  calls: readonly CallUsage[],
  askTokens: number,
): { context: number; growth: number; output: number; calls: number } {
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

/**
 * The cost in dollars of a past arm's calls replayed on today's fork, at today's prices: each later call as the
 * provider billed it then (its fresh, cached and answer tokens: the provider's own caching, not a model of it), its
 * cached part grown or shrunk by how much today's fork is longer or shorter than that arm's was. The first call
 * is today's: the whole fork fresh on a cold model, only the ask on a warm one.
 */
export function replayCost(
  past: readonly CallUsage[],
  context: number,
  prices: ModelPrices,
  askTokens: number,
  warm: boolean,
  head = 0,
): number {
  const first = past[0];
  if (!first) return 0;
  const shift = context + askTokens - promptOf(first);
  let usd = 0;
  for (const [k, c] of past.entries()) {
    const prompt = Math.max(0, promptOf(c) + shift);
    const fresh =
      k === 0
        ? warm
          ? Math.min(askTokens, prompt)
          : Math.max(0, prompt - head)
        : Math.min(prompt, c.input + c.cacheWrite);
    usd += ((prompt - fresh) * prices.cacheRead + fresh * prices.input + c.output * prices.output) / 1e6;
  }
  return usd;
}

/** The calls (1-based from the arm's second) whose prompt brings a test run's output, `runs` of them spread evenly, the last before the report. */
export function testCalls(n: number, runs: number): Set<number> {
  const at = new Set<number>();
  if (n < 2) return at;
  for (let i = 0; i < runs; i += 1) at.add(Math.max(1, Math.round(((i + 1) * (n - 1)) / runs)));
  return at;
}

/**
 * The cost in dollars of an arm making `n` calls of this shape at these prices; `warm`: its first prompt is cached.
 * `testRuns` runs of the tests spread over its calls: each one's output is fresh in the next prompt, then resent
 * (cached) in every later one — a suite that prints a lot weighs on every call after it.
 */
export function armCost(
  shape: ReturnType<typeof armShape>,
  prices: ModelPrices,
  n: number,
  askTokens: number,
  warm: boolean,
  testOutput = 0,
  head = 0,
  testRuns = 1,
): number {
  let usd = 0;
  let prompt = shape.context + askTokens;
  const tests = testOutput > 0 ? testCalls(n, testRuns) : new Set<number>();
  for (let k = 0; k < n; k += 1) {
    const testAt = tests.has(k);
    const fresh = k === 0 ? (warm ? askTokens : Math.max(0, prompt - head)) : shape.growth + (testAt ? testOutput : 0);
    if (testAt) prompt += testOutput;
    const cached = prompt - fresh;
    usd += (cached * prices.cacheRead + fresh * prices.input + shape.output * prices.output) / 1e6;
    prompt += shape.growth;
  }
  return usd;
}

/** Median, low and high of some figures (none: undefined). */
function spread(values: readonly number[]): { low: number; mid: number; high: number } | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  const mid = sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
  return { low: sorted[0]!, mid, high: sorted.at(-1)! };
}

export function forecastFanOut(input: ForecastInput): SpendForecast {
  const shape = armShape(input.calls, input.askTokens);
  const fallback = impliedPrices(input.calls, input.primerCost);
  const warmModels = new Set<string | undefined>([input.primerModel]);
  const history = (input.history ?? []).filter((a) => a.calls.length > 0);
  const tests = Math.max(0, input.testOutputTokens ?? 0);
  // No past arm: an arm's own work, whatever the primer's reading took — it writes, runs the tests, mends, runs them
  // again and reports (six calls at least, three more than the primer's), at the low end only writes and reports
  // (two), at the high end a fix that takes many tries (sixteen at least, three times the primer's). Measured: a
  // first run on a real library (dequal, zustand) whose arms each made four to ten calls was forecast 4–7× low when an
  // arm was reckoned to make as many calls as a primer that read everything in one or two.
  const noHistory = {
    low: Math.max(2, Math.ceil(shape.calls / 2)),
    mid: Math.max(6, shape.calls + 3),
    high: Math.max(16, shape.calls * 3),
  };
  const calls = noHistory.mid;
  // The head every prompt shares (system prompt, tools) that the provider already held when the primer began (a
  // recent run warmed it): a cold arm's first call finds it cached too.
  const head = input.calls[0]?.cacheRead ?? 0;
  const perArm = input.arms.map(({ arm, model }) => {
    const prices = (model && input.prices.get(model)) || fallback;
    // The first arm on a model pays the shared context in full; the prefix gate makes the others wait for it.
    const warm = warmModels.has(model);
    warmModels.add(model);
    const past = pastFor(history, model);
    const replayed = spread(past.map((calls) => replayCost(calls, shape.context, prices, input.askTokens, warm, head)));
    if (replayed) {
      // The cache is the other unknown: the range also spans a first call that finds the fork cached, or nothing.
      const low = Math.min(
        replayed.low,
        ...past.map((calls) => replayCost(calls, shape.context, prices, input.askTokens, true)),
      );
      const high = Math.max(
        replayed.high,
        ...past.map((calls) => replayCost(calls, shape.context, prices, input.askTokens, false)),
      );
      return { arm, ...(model ? { model } : {}), low: round(low), mid: round(replayed.mid), high: round(high) };
    }
    const at = (n: number, runs: number) => round(armCost(shape, prices, n, input.askTokens, warm, tests, head, runs));
    // An arm runs the tests before and after its change (two runs); low: half the primer's calls and no test run;
    // high: twice as many calls, the tests run four times (a fix that takes a few tries).
    return {
      arm,
      ...(model ? { model } : {}),
      low: at(noHistory.low, 0),
      mid: at(noHistory.mid, 2),
      high: at(noHistory.high, 4),
    };
  });
  const sum = (key: 'low' | 'mid' | 'high') => round(input.primerCost + perArm.reduce((s, a) => s + a[key], 0));
  return {
    arms: perArm.length,
    perArm,
    total: { low: sum('low'), mid: sum('mid'), high: sum('high') },
    primer: input.primerCost,
    pastArms: history.length,
    basis:
      history.length > 0
        ? `each arm resends the primer's ${Math.round(shape.context)}-token context (cached on a model that has it) and does what ${history.length} past arm(s) of this repo did (${callRange(history)} calls): their median, their range`
        : `each arm resends the primer's ${Math.round(shape.context)}-token context (cached on a model that has it) over ~${calls} call(s)${tests > 0 ? ` (the tests run twice: ~${Math.round(tests)} tokens of output each)` : ''}, ${noHistory.low}–${noHistory.high} for the range; no past arm of this repo to go by`,
  };
}

/** The past arms that ran on this route; none on it: every past arm (the repo's work shapes an arm more than its model). */
function pastFor(
  history: ReadonlyArray<{ model?: string; calls: readonly CallUsage[] }>,
  model: string | undefined,
): Array<readonly CallUsage[]> {
  const same = history.filter((a) => model !== undefined && a.model === model);
  return (same.length > 0 ? same : history).map((a) => a.calls);
}

function callRange(history: ReadonlyArray<{ calls: readonly CallUsage[] }>): string {
  const counts = history.map((a) => a.calls.length);
  const [lo, hi] = [Math.min(...counts), Math.max(...counts)];
  return lo === hi ? `${lo}` : `${lo}–${hi}`;
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
