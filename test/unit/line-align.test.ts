// src/bon/harvest/lineAlign.ts: two lists of lines aligned as a diff aligns them, for the compare view (`s`).
import { describe, expect, it } from 'vitest';
import { alignLines, likeness, MAX_CELLS, type AlignedLine } from '../../src/bon/harvest/lineAlign.js';

/** The alignment as rows of text, `=` same, `≠` changed, `<` left only, `>` right only. */
function rows(left: string[], right: string[]): string[] {
  return alignLines(left, right).map((line: AlignedLine) => {
    switch (line.kind) {
      case 'same':
        return `= ${left[line.left]}`;
      case 'changed':
        return `≠ ${left[line.left]} | ${right[line.right]}`;
      case 'left':
        return `< ${left[line.left]}`;
      case 'right':
        return `> ${right[line.right]}`;
    }
  });
}

describe('alignLines', () => {
  it('keeps the lines after an insertion in step', () => {
    expect(rows(['a', 'b', 'c', 'd'], ['a', 'x', 'b', 'c', 'd'])).toEqual(['= a', '> x', '= b', '= c', '= d']);
    expect(rows(['a', 'b', 'b2', 'c'], ['a', 'b', 'c'])).toEqual(['= a', '= b', '< b2', '= c']);
  });

  it('faces a changed line with its counterpart, the most alike first, and leaves the surplus one-sided', () => {
    const left = [' ctx', '+// sum them', '+const sum = (a, b) => a + b;', ' end'];
    const right = [' ctx', '+const sum = (a, b) => b + a;', ' end'];
    expect(rows(left, right)).toEqual([
      '=  ctx',
      '< +// sum them',
      '≠ +const sum = (a, b) => a + b; | +const sum = (a, b) => b + a;',
      '=  end',
    ]);
    // Nothing alike: paired in order.
    expect(rows(['x', 'p', 'q', 'y'], ['x', 'r', 'y'])).toEqual(['= x', '≠ p | r', '< q', '= y']);
  });

  it('uses every index of both sides once, in order, whatever the input', () => {
    const cases: Array<[string[], string[]]> = [
      [[], []],
      [['a'], []],
      [[], ['a', 'b']],
      [
        ['a', 'a', 'b'],
        ['b', 'a', 'a'],
      ],
      [
        ['1', '2', '3', '4', '5'],
        ['5', '4', '3', '2', '1'],
      ],
    ];
    for (const [left, right] of cases) {
      const aligned = alignLines(left, right);
      const lefts = aligned.flatMap((l) => ('left' in l ? [l.left] : []));
      const rights = aligned.flatMap((l) => ('right' in l ? [l.right] : []));
      expect(lefts).toEqual(left.map((_, i) => i));
      expect(rights).toEqual(right.map((_, i) => i));
      for (const l of aligned) if (l.kind === 'same') expect(left[l.left]).toBe(right[l.right]);
    }
  });

  it('bounds its table: two large unrelated lists align fast, their common head and tail still matched', () => {
    const size = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
    const left = ['head', ...Array.from({ length: size }, (_, i) => `l${i}`), 'tail'];
    const right = ['head', ...Array.from({ length: size }, (_, i) => `r${i}`), 'tail'];
    const aligned = alignLines(left, right);
    expect(aligned[0]).toEqual({ kind: 'same', left: 0, right: 0 });
    expect(aligned.at(-1)).toEqual({ kind: 'same', left: size + 1, right: size + 1 });
    expect(aligned.filter((l) => l.kind === 'changed')).toHaveLength(size);
  });

  it('likeness is the shared head and tail over the longer line', () => {
    expect(likeness('abc', 'abc')).toBe(1);
    expect(likeness('', '')).toBe(1);
    expect(likeness('abXd', 'abYd')).toBe(0.75);
    expect(likeness('abc', 'xyz')).toBe(0);
  });
});
