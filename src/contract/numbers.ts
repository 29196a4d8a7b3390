// Figures that stay numbers. Tokens and costs come from pi's JSON stream, where anything can appear: a negative
// count, NaN-ish junk, or `1e400`, which JSON.parse reads as Infinity. Once such a value is summed it poisons
// every total after it (Infinity, NaN, or a bill that shrinks), and JSON.stringify writes it as `null` in the
// trace. Every figure is clamped where it comes in and every sum where it is made, so totals are always finite,
// non-negative numbers.

/** Cap of a token count: beyond it integers lose precision, and no run comes near it. */
export const MAX_TOKENS = Number.MAX_SAFE_INTEGER;

/** Cap of a cost in USD: a billion dollars is no bill a run can reach, so only a broken figure is cut. */
export const MAX_COST = 1e9;

function clamp(value: unknown, cap: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) return 0;
  return value > cap ? cap : value;
}

/** A token count as a finite number in [0, MAX_TOKENS]: not a number, NaN or negative → 0, too big → the cap. */
export function finiteCount(value: unknown): number {
  return clamp(value, MAX_TOKENS);
}

/** A cost as a finite number in [0, MAX_COST], with the same rules as finiteCount. */
export function finiteCost(value: unknown): number {
  return clamp(value, MAX_COST);
}

/** The sum of two token counts, each clamped first, the sum clamped again: it never reaches Infinity. */
export function addCounts(a: unknown, b: unknown): number {
  return finiteCount(finiteCount(a) + finiteCount(b));
}

/** The sum of two costs, clamped like addCounts. */
export function addCosts(a: unknown, b: unknown): number {
  return finiteCost(finiteCost(a) + finiteCost(b));
}
