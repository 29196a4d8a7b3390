import { describe, expect, it } from 'vitest';
import { createRedactor, MIN_SECRET_LENGTH, redactDeep, redactJsonLine } from '../../src/contract/redact.js';

describe('createRedactor', () => {
  it('replaces every occurrence, by name when it has one', () => {
    const redact = createRedactor([{ name: 'OPENROUTER_API_KEY', value: 'sk-or-v1-abcdef' }, 'ghp_0123456789']);
    expect(redact('key=sk-or-v1-abcdef and again sk-or-v1-abcdef; token ghp_0123456789.')).toBe(
      'key=«redacted:OPENROUTER_API_KEY» and again «redacted:OPENROUTER_API_KEY»; token ***.',
    );
  });

  it('leaves a line without secrets untouched (same string)', () => {
    const redact = createRedactor(['sk-or-v1-abcdef']);
    const line = '[abcd1234] build (agent, attempt 1/3): OK in 12.3 s';
    expect(redact(line)).toBe(line);
    expect(redact('')).toBe('');
  });

  it('treats regex metacharacters literally', () => {
    const value = 'p@ss.w*rd+(x)?[y]{2}|^$\\/-';
    const redact = createRedactor([{ name: 'DB_PASSWORD', value }]);
    expect(redact(`a ${value} b`)).toBe('a «redacted:DB_PASSWORD» b');
    // The metacharacters do not act as a pattern: a string they would match as a regex stays.
    expect(redact('p@ssXwwwrd')).toBe('p@ssXwwwrd');
  });

  it("a secret that is a prefix of another never leaves the longer one's tail visible", () => {
    const redact = createRedactor([
      { name: 'SHORT', value: 'abcdef12' },
      { name: 'LONG', value: 'abcdef12345678' },
    ]);
    expect(redact('x abcdef12345678 y abcdef12 z')).toBe('x «redacted:LONG» y «redacted:SHORT» z');
    const reversed = createRedactor([
      { name: 'LONG', value: 'abcdef12345678' },
      { name: 'SHORT', value: 'abcdef12' },
    ]);
    expect(reversed('abcdef12345678')).toBe('«redacted:LONG»');
  });

  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    const redact = createRedactor(['true', '12345', 'dev', '']);
    expect(redact('true 12345 dev')).toBe('true 12345 dev');
    expect(createRedactor(['abcdef'])('abcdef')).toBe('***');
  });

  it('also catches the JSON-escaped form of a value (trace records, --json lines)', () => {
    const value = 'pa"ss\\word-42';
    const redact = createRedactor([{ name: 'WEIRD_SECRET', value }]);
    const record = JSON.stringify({ type: 'tool_end', output: `echo ${value}` });
    expect(redact(record)).toBe('{"type":"tool_end","output":"echo «redacted:WEIRD_SECRET»"}');
    expect(JSON.parse(redact(record)).output).toBe('echo «redacted:WEIRD_SECRET»');
  });

  it('a named mask wins over a bare one for the same value', () => {
    expect(createRedactor(['sk-same-value', { name: 'KEY_A', value: 'sk-same-value' }])('sk-same-value')).toBe(
      '«redacted:KEY_A»',
    );
  });

  it('with nothing to hide it is the identity', () => {
    const redact = createRedactor([]);
    expect(redact('anything')).toBe('anything');
  });

  it('is safe to reuse: no state leaks between calls (global regex lastIndex)', () => {
    const redact = createRedactor(['secret-value-1']);
    for (let i = 0; i < 5; i++) expect(redact('secret-value-1')).toBe('***');
    expect(redact('zz secret-value-1')).toBe('zz ***');
  });
});

describe('redactDeep', () => {
  it('redacts every string of a JSON-like value, keys included, and copies it', () => {
    const redact = createRedactor([{ name: 'K', value: 'sk-deep-secret' }]);
    const input = { a: 'sk-deep-secret', list: [1, 'x sk-deep-secret', null, { n: true }], 'sk-deep-secret': 2 };
    expect(redactDeep(redact, input)).toEqual({
      a: '«redacted:K»',
      list: [1, 'x «redacted:K»', null, { n: true }],
      '«redacted:K»': 2,
    });
    expect(input.a).toBe('sk-deep-secret');
  });
});

describe('redactJsonLine', () => {
  const redact = createRedactor([
    { name: 'PIN', value: '424242' },
    { name: 'QUOTED_SECRET', value: 'a"b\\c-secret' },
  ]);

  it('masks the strings of a JSON line and never its numbers', () => {
    const line = JSON.stringify({ ts: 1424242000, note: 'pin 424242', nested: [{ v: 'a"b\\c-secret' }] });
    expect(JSON.parse(redactJsonLine(redact, line))).toEqual({
      ts: 1424242000,
      note: 'pin «redacted:PIN»',
      nested: [{ v: '«redacted:QUOTED_SECRET»' }],
    });
  });

  it('returns a clean line as the same string, and masks a torn one as text', () => {
    const clean = JSON.stringify({ ts: 1, note: 'nothing here' });
    expect(redactJsonLine(redact, clean)).toBe(clean);
    // Only a number matches: parsed, nothing to mask in strings, written back equal in value.
    expect(JSON.parse(redactJsonLine(redact, JSON.stringify({ n: 424242 })))).toEqual({ n: 424242 });
    expect(redactJsonLine(redact, '{"note": "pin 424242')).toBe('{"note": "pin «redacted:PIN»');
  });
});
