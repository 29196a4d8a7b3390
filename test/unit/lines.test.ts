import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/pi/lines.js';

const FIXTURE = new URL('../fixtures/pi/gate.jsonl', import.meta.url);

/** Feeds `input` cut at the given byte offsets; returns every line, end() included. */
function split(input: Buffer | string, cuts: number[] = [], opts?: { maxLineBytes?: number }) {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const splitter = new LineSplitter(opts);
  const lines: string[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    lines.push(...splitter.push(bytes.subarray(at, cut)));
    at = cut;
  }
  lines.push(...splitter.end());
  return { lines, splitter };
}

describe('LineSplitter', () => {
  it('splits on LF, one chunk or many', () => {
    expect(split('a\nb\nc\n').lines).toEqual(['a', 'b', 'c']);
    expect(split('ab\ncd\n', [1, 3, 4]).lines).toEqual(['ab', 'cd']);
  });

  it('strips the CR of CRLF, only at the end of a line', () => {
    expect(split('a\r\nb\rc\r\n').lines).toEqual(['a', 'b\rc']);
    // CR and LF in different chunks
    expect(split('abc\r\ndef\r\n', [4]).lines).toEqual(['abc', 'def']);
  });

  it('does not break on U+2028 / U+2029 (legal inside JSON strings)', () => {
    const line = JSON.stringify({ type: 'message_update', delta: 'one\u2028two\u2029three' });
    const { lines } = split(`${line}\n${line}\n`);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!).delta).toBe('one\u2028two\u2029three');
  });

  it('a multi-byte character split across chunks at every byte offset is never corrupted', () => {
    const text = 'é ✓ 😀 \u2028 ü\nsecond 😀 line\nthird';
    const bytes = Buffer.from(text, 'utf8');
    for (let a = 0; a <= bytes.length; a++) {
      expect(split(bytes, [a]).lines, `cut at ${a}`).toEqual(text.split('\n'));
    }
    // and byte by byte
    const everyByte = Array.from({ length: bytes.length }, (_, i) => i);
    expect(split(bytes, everyByte).lines).toEqual(text.split('\n'));
  });

  it('end() returns a torn last line without LF, and resets', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(Buffer.from('{"a":1}\n{"b":'))).toEqual(['{"a":1}']);
    expect(splitter.push(Buffer.from('2}'))).toEqual([]);
    expect(splitter.end()).toEqual(['{"b":2}']);
    expect(splitter.end()).toEqual([]);
    expect(splitter.lines).toBe(2);
  });

  it('a torn last line ending with CR loses the CR', () => {
    expect(split('x\ny\r').lines).toEqual(['x', 'y']);
  });

  it('empty lines are skipped and not counted', () => {
    const { lines, splitter } = split('\n\na\n\r\n\nb\n');
    expect(lines).toEqual(['a', 'b']);
    expect(splitter.lines).toBe(2);
  });

  it('an oversized line is dropped and counted, the following lines survive', () => {
    const big = 'x'.repeat(100);
    const { lines, splitter } = split(`ok\n${big}\nafter\n`, [], { maxLineBytes: 50 });
    expect(lines).toEqual(['ok', 'after']);
    expect(splitter.oversized).toBe(1);
  });

  it('an oversized line spread over many chunks is discarded up to its LF, not buffered', () => {
    const splitter = new LineSplitter({ maxLineBytes: 16 });
    expect(splitter.push(Buffer.from('head\n' + 'y'.repeat(10)))).toEqual(['head']);
    expect(splitter.push(Buffer.from('y'.repeat(10)))).toEqual([]);
    // the pending piece is gone as soon as the cap is crossed
    expect(splitter.oversized).toBe(1);
    expect((splitter as unknown as { pendingBytes: number }).pendingBytes).toBe(0);
    expect(splitter.push(Buffer.from('y'.repeat(1000)))).toEqual([]);
    expect(splitter.push(Buffer.from('yyy\ntail\n'))).toEqual(['tail']);
    expect(splitter.oversized).toBe(1);
    expect(splitter.end()).toEqual([]);
  });

  it('a torn oversized last line is not returned by end()', () => {
    const { lines, splitter } = split(`a\n${'z'.repeat(40)}`, [5, 20], { maxLineBytes: 10 });
    expect(lines).toEqual(['a']);
    expect(splitter.oversized).toBe(1);
  });

  it('the cap is exact: a line of maxLineBytes passes (with or without CR), one more byte does not', () => {
    expect(split(`${'a'.repeat(10)}\n`, [], { maxLineBytes: 10 }).lines).toEqual(['a'.repeat(10)]);
    expect(split(`${'a'.repeat(10)}\r\n`, [4], { maxLineBytes: 10 }).lines).toEqual(['a'.repeat(10)]);
    const over = split(`${'a'.repeat(11)}\n`, [4], { maxLineBytes: 10 });
    expect(over.lines).toEqual([]);
    expect(over.splitter.oversized).toBe(1);
  });

  it('reads a captured pi stream identically whatever the chunk size', () => {
    const bytes = readFileSync(FIXTURE);
    const expected = bytes
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    for (const size of [1, 7, 64, 4096, bytes.length]) {
      const cuts: number[] = [];
      for (let at = size; at < bytes.length; at += size) cuts.push(at);
      const { lines } = split(bytes, cuts);
      expect(lines, `chunk size ${size}`).toEqual(expected);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    }
  });
});
