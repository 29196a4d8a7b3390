// Text fitted by display width: CJK and emoji take two columns, combining marks none, and a cut never splits a
// character (an emoji's surrogates, a ZWJ family, a letter and its accent).
import { describe, expect, it } from 'vitest';
import { displayWidth, fit, fitCell, fitStart, lastLine, flatLine, pad } from '../../src/contract/text.js';

const FAMILY = '👨‍👩‍👧'; // one grapheme, five code points joined by ZWJ

describe('displayWidth', () => {
  it('counts CJK and emoji as two columns, combining marks and escape sequences as none', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('日本語')).toBe(6);
    expect(displayWidth('👍')).toBe(2);
    expect(displayWidth(FAMILY)).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('\x1b[31mred\x1b[0m')).toBe(3);
    expect(displayWidth('…')).toBe(1);
  });
});

describe('fit', () => {
  it('leaves text that fits as it is, and cuts the rest with an ellipsis in the columns', () => {
    expect(fit('adw_build', 9)).toBe('adw_build');
    expect(fit('adw_something_long', 9)).toBe('adw_some…');
    expect(fit('abc', 1)).toBe('…');
    expect(fit('abc', 0)).toBe('');
    expect(fit('', 5)).toBe('');
  });

  it('counts wide characters twice and never cuts one in half', () => {
    expect(fit('日本語テキスト', 7)).toBe('日本語…');
    expect(displayWidth(fit('日本語テキスト', 7))).toBe(7);
    expect(fit('日本語テキスト', 6)).toBe('日本…'); // a third character would need 7 columns with the ellipsis
    expect(fit('👍👍👍👍', 5)).toBe('👍👍…');
    expect(fit(`${FAMILY}${FAMILY}${FAMILY}`, 4)).toBe(`${FAMILY}…`);
    expect(fit('cafe\u0301 crème', 5)).toBe('cafe\u0301…'); // the accent stays on its letter
  });

  it('takes another ellipsis, counted in the columns', () => {
    expect(fit('x'.repeat(200), 160, { ellipsis: '...' })).toBe(`${'x'.repeat(157)}...`);
    expect(fit('abcdef', 2, { ellipsis: '...' })).toBe('..');
  });
});

describe('fitStart', () => {
  it('keeps the end of the text, the ellipsis first', () => {
    expect(fitStart('abc', 5)).toBe('abc');
    expect(fitStart('abcdefgh', 5)).toBe('…efgh');
    expect(fitStart('テキストの終わり', 7)).toBe('…終わり');
    expect(fitStart('テキストの終わり', 8)).toBe('…終わり'); // a fourth character would need 9 columns
    expect(fitStart('a👍👍', 4)).toBe('…👍');
  });
});

describe('pad and fitCell', () => {
  it('pad to display columns, on the side the alignment asks, never cutting', () => {
    expect(pad('ab', 4)).toBe('ab  ');
    expect(pad('ab', 4, 'right')).toBe('  ab');
    expect(pad('日本', 6)).toBe('日本  ');
    expect(pad('toolong', 3)).toBe('toolong');
  });

  it('a cell is cut then padded: columns line up whatever the script', () => {
    expect(fitCell('12k', 6, 'right')).toBe('   12k');
    expect(fitCell('2/3', 6)).toBe('2/3   ');
    expect(fitCell('adw_something_long', 9)).toBe('adw_some…');
    for (const text of ['adw_build', '構築ワークフロー', '🚀 launch', 'x'])
      expect(displayWidth(fitCell(text, 9))).toBe(9);
    expect(fitCell('構築ワークフロー', 9)).toBe('構築ワー…');
    expect(fitCell('構築ワークフロー', 10)).toBe('構築ワー… '); // a fifth character would not fit: one blank pads it
  });
});

describe('flatLine and lastLine', () => {
  it('flatLine collapses every run of whitespace, then fits when given columns', () => {
    expect(flatLine('  a\n\tb   c \r\n')).toBe('a b c');
    expect(flatLine('一行\n二行目のテキスト', 9)).toBe('一行 二…');
  });

  it('lastLine is the last non-blank line, trimmed and fitted', () => {
    expect(lastLine('first\n  last one  \n\n', 20)).toBe('last one');
    expect(lastLine('', 20)).toBe('');
    expect(lastLine(`x\n${'y'.repeat(30)}`, 10, { ellipsis: '...' })).toBe('yyyyyyy...');
  });
});
