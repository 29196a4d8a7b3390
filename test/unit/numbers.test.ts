import { describe, expect, it } from 'vitest';
import { MAX_COST, MAX_TOKENS, addCosts, addCounts, finiteCost, finiteCount } from '../../src/contract/numbers.js';

describe('figures that stay numbers', () => {
  it('a count passes as it is when it is a finite, non-negative number', () => {
    expect(finiteCount(0)).toBe(0);
    expect(finiteCount(1234)).toBe(1234);
    expect(finiteCost(0.017898)).toBe(0.017898);
  });

  it('what is not a number, NaN and negatives read 0', () => {
    for (const junk of [Number.NaN, -1, -Infinity, -0, '12', null, undefined, {}, [], true]) {
      expect(finiteCount(junk)).toBe(0);
      expect(finiteCost(junk)).toBe(0);
    }
  });

  it('Infinity (JSON.parse reads `1e400` so) and overflowing values read the cap, a finite number', () => {
    expect(finiteCount(JSON.parse('1e400'))).toBe(MAX_TOKENS);
    expect(finiteCount(Number.MAX_VALUE)).toBe(MAX_TOKENS);
    expect(finiteCost(Infinity)).toBe(MAX_COST);
    expect(finiteCost(1e300)).toBe(MAX_COST);
  });

  it('a sum never reaches Infinity nor shrinks on a negative figure', () => {
    expect(addCounts(Number.MAX_VALUE, Number.MAX_VALUE)).toBe(MAX_TOKENS);
    expect(addCounts(MAX_TOKENS, MAX_TOKENS)).toBe(MAX_TOKENS);
    expect(addCosts(Number.MAX_VALUE, Number.MAX_VALUE)).toBe(MAX_COST);
    expect(addCounts(100, -40)).toBe(100);
    expect(addCosts(0.5, Number.NaN)).toBe(0.5);
    expect(addCounts(100, 23)).toBe(123);
    expect(addCosts(0.25, 0.5)).toBe(0.75);
  });
});
