// How a red command's output becomes a motif: plain text first (a runner's colours, hyperlinks and progress
// redraws are for a terminal), then the lines that say what failed. The runner samples in
// test/fixtures/runner-output are real output of node --test (spec reporter, FORCE_COLOR=1), vitest (coloured)
// uvu, and the user-world fixture's runner, and jest, mocha and node-tap output in their formats (jest and mocha
// coloured as they print on a terminal).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { plainText, tellingOutput } from '../../src/gates/judges.js';

const SAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/runner-output');
const sample = (name: string): string => fs.readFileSync(path.join(SAMPLES, name), 'utf8');
/** What a terminal would interpret: every control character but tab and newline. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('plainText', () => {
  it('drops SGR colours and styles, keeping the text they paint', () => {
    expect(
      plainText(
        '\x1b[31m✗\x1b[39m \x1b[1;4mfarewell\x1b[0m > \x1b[38;5;196msays\x1b[m \x1b[38;2;255;0;0mgoodbye\x1b[49m',
      ),
    ).toBe('✗ farewell > says goodbye');
  });

  it('keeps the text of an OSC 8 hyperlink, ended by ST or by BEL, and drops window titles', () => {
    expect(plainText('see \x1b]8;;file:///home/ada/test/x.test.js\x1b\\test/x.test.js\x1b]8;;\x1b\\ now')).toBe(
      'see test/x.test.js now',
    );
    expect(plainText('\x1b]8;id=1;https://example.com/\x07docs\x1b]8;;\x07!')).toBe('docs!');
    expect(plainText('\x1b]0;npm test\x07done')).toBe('done');
  });

  it('drops cursor moves, erases and mode switches', () => {
    expect(plainText('\x1b[?25lline\x1b[2K\x1b[1G\x1b[3A\x1b[10;5H\x1b[?25h end\x1b(B\x1b=')).toBe('line end');
  });

  it('keeps a line redrawn with \\r as it was last drawn, and reads CRLF as a newline', () => {
    expect(plainText('Downloading 10%\rDownloading 55%\rDownloaded\nnext')).toBe('Downloaded\nnext');
    expect(plainText('\x1b[2mrunning test/a.test.js…\x1b[22m\r\x1b[2K ❯ test/a.test.js\n')).toBe(' ❯ test/a.test.js\n');
    expect(plainText('one\r\ntwo\r\n')).toBe('one\ntwo\n');
    expect(plainText('working…\r')).toBe('working…');
  });

  it('resolves backspace overstrikes and drops the other control characters, tab and newline kept', () => {
    expect(plainText('B\bBo\bol\bld\bd')).toBe('Bold');
    expect(plainText('ding\x07\x00\x1a\x7f!\tnext\n')).toBe('ding!\tnext\n');
  });

  it('reads the 8-bit forms (C1 CSI, OSC) and a sequence cut short at the end of the output', () => {
    expect(plainText('\u009b31mred\u009b0m \u009d0;title\u009cok')).toBe('red ok');
    expect(plainText('tail \x1b]8;;file:///cut-sh')).toBe('tail ');
    expect(plainText('tail \x1b]8;;file:///cut\nnext line')).toBe('tail \nnext line');
    expect(plainText('tail \x1b[')).toBe('tail ');
    expect(plainText('tail \x1b[38;5;19')).toBe('tail ');
  });

  it('leaves plain text as it is', () => {
    const text = "not ok 2 - says goodbye\n  expected: 'Goodbye' [1] (a|b) 100%\n";
    expect(plainText(text)).toBe(text);
  });
});

describe('tellingOutput on the usual runners', () => {
  const cases: [file: string, named: string, why: string][] = [
    ['spot.txt', '✗ farewell > says goodbye', 'Expected values to be strictly equal:'],
    ['node-test-spec.txt', '✖ says goodbye', "actual: 'Bye, Ada.'"],
    [
      'vitest.txt',
      'FAIL  test/farewell.vitest.test.js > farewell > says goodbye',
      "AssertionError: expected 'Bye, Ada.' to be 'Goodbye, Ada!'",
    ],
    ['jest.txt', '● farewell › says goodbye', 'Received: "Bye, Ada."'],
    ['mocha.txt', '1) farewell | says goodbye:', "'Bye, Ada.' !== 'Goodbye, Ada!'"],
    ['tap.txt', 'not ok 1 - says goodbye', 'not ok 1 - should be equal'],
    // uvu (dequal's runner, captured here): both sides of its diff, not only the first.
    [
      'uvu.txt',
      'FAIL  "says goodbye" | Expected values to be strictly equal:  (is)',
      '++true     (Expected) | --false    (Actual)',
    ],
  ];
  for (const [file, named, why] of cases) {
    it(`names the failing test and why in ${file}`, () => {
      const telling = tellingOutput(sample(file), 260);
      expect(telling).toContain(named);
      expect(telling).toContain(why);
      expect(telling).not.toMatch(CONTROL);
      expect(telling.length).toBeLessThanOrEqual(260);
    });
  }

  it('puts the failing test first: the motif keeps the start when the room is short', () => {
    expect(tellingOutput(sample('spot.txt'), 40)).toBe('✗ farewell > says goodbye | Expected va…');
    expect(
      tellingOutput(sample('jest.txt'), 300).startsWith(
        'FAIL  test/farewell.test.js | farewell | ✕ says goodbye (3 ms) | ● farewell › says goodbye',
      ),
    ).toBe(true);
  });

  it("leaves out jest's console blocks, TAP plans and the rules vitest draws; keeps mocha's counts, last", () => {
    expect(tellingOutput(sample('jest.txt'), 300)).not.toContain('Console');
    expect(tellingOutput(sample('mocha.txt'), 300)).toMatch(/ \| 1 passing \(4ms\) \| 1 failing$/);
    expect(tellingOutput(sample('tap.txt'), 300)).not.toMatch(/\| 1\.\.1/);
    expect(tellingOutput(sample('vitest.txt'), 300)).not.toContain('⎯');
  });

  it('skips stack frames that a runner dims in grey', () => {
    expect(tellingOutput(sample('node-test-spec.txt'), 2000)).not.toMatch(/\bat Test\.run/);
  });
});
