// The ADW registry: what `factory resume` reads back from a run log is validated, never cast.
import { describe, expect, it } from 'vitest';
import { ADWS, readResumable } from '../../adws/registry.js';

describe('ADW registry', () => {
  it('knows the three ADWs; all three resume', () => {
    expect(Object.entries(ADWS).map(([name, adw]) => [name, adw.resumable])).toEqual([
      ['adw_prompt', true],
      ['adw_build', true],
      ['adw_bon', true],
    ]);
  });

  it('reads recorded arguments back typed, dropping what the schema does not know', () => {
    expect(readResumable('adw_prompt', { ask: 'Which files?', retries: 2, model: 'scripted/alpha', stray: 1 })).toEqual(
      {
        adwName: 'adw_prompt',
        args: { ask: 'Which files?', retries: 2, model: 'scripted/alpha' },
      },
    );
    expect(readResumable('adw_build', { spec: 'specs/a.md', retries: 0, harness: 'claude' })).toEqual({
      adwName: 'adw_build',
      args: { spec: 'specs/a.md', retries: 0, harness: 'claude' },
    });
  });

  it('reads a bon run back; refuses with a motif an unknown ADW and arguments that are not what the ADW records', () => {
    expect(readResumable('adw_bon', { spec: 'a.md', arms: 3, models: [], apply: false })).toEqual({
      adwName: 'adw_bon',
      args: { spec: 'a.md', arms: 3, models: [], apply: false },
    });
    expect(readResumable('adw_bon', { spec: 'a.md', arms: 3, models: [], apply: false, concurrency: 0 })).toMatchObject(
      { motif: expect.stringMatching(/^an adw_bon whose recorded arguments are not valid \(concurrency: /) },
    );
    expect(readResumable('', {})).toEqual({ motif: 'a run of unknown kind: it cannot be resumed' });
    expect(readResumable('adw_other', {})).toEqual({ motif: 'an adw_other: it cannot be resumed' });
    const bad = readResumable('adw_build', { spec: 'a.md', retries: 'two' });
    expect(bad).toMatchObject({
      motif: expect.stringMatching(
        /^an adw_build whose recorded arguments are not valid \(retries: .+\): it cannot be resumed$/,
      ),
    });
    expect(readResumable('adw_prompt', { ask: '', retries: 1 })).toMatchObject({
      motif: expect.stringContaining('(ask: '),
    });
  });
});
