// The command line's flags: one table, Node's own parser, one-line refusals.
import { describe, expect, it } from 'vitest';
import { parseCli, unknownFlag } from '../../src/cliArgs.js';
import { UsageError } from '../../src/errors.js';

describe('parseCli', () => {
  it('fills the defaults and keeps the positionals', () => {
    const { input, flags } = parseCli(['bon', 'specs/x.md']);
    expect(input).toEqual(['bon', 'specs/x.md']);
    expect(flags).toMatchObject({ retries: 2, ui: true, json: false, apply: false, quick: false, strict: false, help: false, version: false });
    expect(flags.arms).toBeUndefined();
    expect(flags.cwd).toBeUndefined();
  });

  it('reads numbers as numbers (NaN when they are not), strings in both spellings, and --no-<flag>', () => {
    const { flags } = parseCli(['--arms', '4', '--retries=0', '--cwd=/tmp/x', '--models', 'a/b,c/d', '--no-ui', '--json']);
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
