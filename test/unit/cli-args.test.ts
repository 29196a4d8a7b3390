// The command line's flags: one table, Node's own parser, one-line refusals.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { validateArms } from '../../src/bon/check.js';
import { joinValues, parseCli, unknownFlag } from '../../src/cli/args.js';
import { askFrom, MAX_STDIN_ASK } from '../../src/commands/prompt.js';
import { parseRetries } from '../../src/commands/workspace.js';
import { UsageError } from '../../src/contract/errors.js';

describe('parseCli', () => {
  it('fills the defaults and keeps the positionals', () => {
    const { input, flags } = parseCli(['bon', 'specs/x.md']);
    expect(input).toEqual(['bon', 'specs/x.md']);
    expect(flags).toMatchObject({
      retries: 2,
      ui: true,
      json: false,
      apply: false,
      quick: false,
      strict: false,
      help: false,
      version: false,
    });
    expect(flags.arms).toBeUndefined();
    expect(flags.cwd).toBeUndefined();
  });

  it('reads numbers as numbers (NaN when they are not), strings in both spellings, and --no-<flag>', () => {
    const { flags } = parseCli([
      '--arms',
      '4',
      '--retries=0',
      '--cwd=/tmp/x',
      '--models',
      'a/b,c/d',
      '--no-ui',
      '--json',
    ]);
    expect(flags).toMatchObject({ arms: 4, retries: 0, cwd: '/tmp/x', models: 'a/b,c/d', ui: false, json: true });
    expect(Number.isNaN(parseCli(['--arms', 'three']).flags.arms)).toBe(true);
    expect(parseCli(['--arms', '2', '--arms', '5']).flags.arms).toBe(5); // the last one wins
  });

  it('takes everything after -- as positionals', () => {
    expect(parseCli(['prompt', '--', '--not-a-flag']).input).toEqual(['prompt', '--not-a-flag']);
  });

  it('refuses an unknown flag, a missing value and a value given to a boolean, in one line', () => {
    for (const argv of [['--bogus'], ['--no-such'], ['prompt', '--cwd'], ['--json=yes']]) {
      let error: unknown;
      try {
        parseCli(argv);
      } catch (e) {
        error = e;
      }
      expect(error, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(unknownFlag(['--bogus=1'])).toBe('--bogus');
    expect(unknownFlag(['--no-ui', '--', '--bogus'])).toBeUndefined();
  });
});

describe('a flag that takes a value takes the next word', () => {
  it('--arms -3 and --retries -1 are values (for the command to name the flag and its range), not unknown flags', () => {
    expect(joinValues(['bon', 'x.md', '--arms', '-3'])).toEqual(['bon', 'x.md', '--arms=-3']);
    expect(parseCli(['bon', 'x.md', '--arms', '-3']).flags.arms).toBe(-3);
    expect(parseCli(['prompt', 'hi', '--retries', '-1']).flags.retries).toBe(-1);
    expect(parseCli(['prompt', '--model', '-x', 'hi']).flags.model).toBe('-x');
    // Booleans take no value; a valued flag at the end still lacks one; -- ends the flags.
    expect(joinValues(['--json', '-3'])).toEqual(['--json', '-3']);
    expect(() => parseCli(['prompt', '--cwd'])).toThrow(UsageError);
    expect(joinValues(['--arms', '--', '-3'])).toEqual(['--arms', '--', '-3']);
  });

  it('the commands then name the flag and its range', () => {
    expect(() => validateArms(parseCli(['--arms', '-3']).flags.arms)).toThrow(
      /^--arms -3 is too few: best-of-N compares at least 2 arms$/,
    );
    expect(() => parseRetries(parseCli(['--retries', '-1']).flags.retries)).toThrow(
      /^--retries must be an integer from 0 to 10 \(got -1\)$/,
    );
  });
});

describe('the ask from stdin', () => {
  it('`-` or no words with a piped stdin read it; words are the ask otherwise; a runaway stdin is refused', async () => {
    expect(await askFrom(['-'], Readable.from([Buffer.from('Which files?\n')]))).toBe('Which files?\n');
    expect(await askFrom([], Readable.from(['from ', 'a pipe']))).toBe('from a pipe');
    expect(await askFrom(['two', 'words'], Readable.from(['ignored']))).toBe('two words');
    const tty = Object.assign(Readable.from(['never read']), { isTTY: true });
    expect(await askFrom([], tty)).toBe('');
    const big = Readable.from([Buffer.alloc(MAX_STDIN_ASK + 1, 'a')]);
    await expect(askFrom(['-'], big)).rejects.toThrow(/^the ask on stdin is longer than 1024 KB/);
  });
});
