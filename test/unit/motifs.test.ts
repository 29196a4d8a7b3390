// Motifs are one line: every Unicode line break ends a line, and a cut falls between whole code points.
import { describe, expect, it } from 'vitest';
import { LINE_BREAK, clip, firstLine } from '../../src/contract/errors.js';

const BREAKS = ['\n', '\r\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029'];

/** True when a UTF-16 string holds a surrogate that is not half of a pair. */
function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

describe('firstLine (errors)', () => {
  it.each(BREAKS.map((b) => [JSON.stringify(b), b]))('the first line ends at %s', (_name, brk) => {
    expect(firstLine(`first${brk}second`)).toBe('first');
    expect(firstLine(`  ${brk}${brk}  second line${brk}third`)).toBe('second line');
  });

  it('a line break of any kind never survives', () => {
    const text = BREAKS.map((b, i) => `line ${i}${b}`).join('');
    expect(LINE_BREAK.test(firstLine(text))).toBe(false);
    expect(firstLine(text)).toBe('line 0');
  });

  it('cuts in code points, never inside a surrogate pair', () => {
    const emoji = '😀'.repeat(10);
    expect(firstLine(emoji, 5)).toBe('😀😀😀😀…');
    expect(hasLoneSurrogate(firstLine(`a${emoji}`, 4))).toBe(false);
    expect(firstLine('x'.repeat(400))).toHaveLength(300);
    expect(firstLine('short', 300)).toBe('short');
  });
});

describe('clip', () => {
  it('keeps a text of at most max code points whole, even when it has more UTF-16 units', () => {
    expect(clip('😀😀😀', 3)).toBe('😀😀😀');
    expect(clip('😀😀😀😀', 3)).toBe('😀😀…');
    expect(clip('abcdef', 1)).toBe('…');
    expect(clip('abcdef', 0)).toBe('');
  });

  it('never leaves a lone surrogate, whatever the cut', () => {
    const text = 'a😀b😀😀c😀';
    for (let max = 1; max <= 8; max += 1) expect(hasLoneSurrogate(clip(text, max))).toBe(false);
  });
});
