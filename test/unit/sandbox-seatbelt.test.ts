// The Seatbelt profile's text (src/sandbox/seatbelt.ts): only the text can be checked on Linux, so these pin the
// order of the rules (in SBPL the last matching rule wins), the /private twins, the escaping and the refusals.
import { describe, expect, it } from 'vitest';
import type { SandboxPolicy } from '../../src/sandbox/policy.js';
import { seatbeltProfile, wrapSeatbelt } from '../../src/sandbox/seatbelt.js';

const policy: SandboxPolicy = {
  writable: ['/Users/me/repo/.factory/arms/a1', '/var/folders/xy/T/arm-a1', '/tmp/sessions'],
  readOnly: ['/Users/me/repo/.factory/arms/a1/ledger.json', '/tmp/sessions/primer.jsonl'],
  cwd: '/Users/me/repo/.factory/arms/a1',
};

/** Where `needle` stands in `text`, failing the test when it is not there at all. */
function at(text: string, needle: string): number {
  const i = text.indexOf(needle);
  expect(i, `missing from the profile: ${needle}`).toBeGreaterThanOrEqual(0);
  return i;
}

describe('seatbelt profile', () => {
  const profile = seatbeltProfile(policy);

  it('starts with the version, allows by default, then denies every write before any allow', () => {
    expect(profile.startsWith('(version 1)\n(allow default)\n')).toBe(true);
    const denyAll = at(profile, '(deny file-write* (subpath "/"))\n');
    expect(denyAll).toBeLessThan(profile.indexOf('(allow file-write*'));
    expect(profile.split('(deny file-write* (subpath "/"))').length).toBe(2);
  });

  it('allows each writable folder, then the devices, then denies the read-only paths last', () => {
    const denyAll = at(profile, '(deny file-write* (subpath "/"))');
    const arm = at(profile, '(allow file-write* (subpath "/Users/me/repo/.factory/arms/a1"))');
    const devNull = at(profile, '(allow file-write* (literal "/dev/null"))');
    const ledger = at(
      profile,
      '(deny file-write* (literal "/Users/me/repo/.factory/arms/a1/ledger.json") (subpath "/Users/me/repo/.factory/arms/a1/ledger.json"))',
    );
    expect(denyAll).toBeLessThan(arm);
    expect(arm).toBeLessThan(devNull);
    expect(devNull).toBeLessThan(ledger);
    // No allow after the first read-only deny: the exceptions win.
    expect(profile.indexOf('(allow', ledger)).toBe(-1);
    expect(profile.endsWith('\n')).toBe(true);
  });

  it('allows the device files programs write', () => {
    for (const dev of ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper', '/dev/ptmx'])
      at(profile, `(allow file-write* (literal "${dev}"))\n`);
    at(profile, '(allow file-write* (regex #"^/dev/fd/"))\n');
    at(profile, '(allow file-write* (regex #"^/dev/ttys[0-9]+"))\n');
  });

  it('adds the /private twin of a folder under /var or /tmp, right after it, and none for other folders', () => {
    const v = at(profile, '(allow file-write* (subpath "/var/folders/xy/T/arm-a1"))\n');
    expect(at(profile, '(allow file-write* (subpath "/private/var/folders/xy/T/arm-a1"))\n')).toBeGreaterThan(v);
    at(profile, '(allow file-write* (subpath "/tmp/sessions"))\n');
    at(profile, '(allow file-write* (subpath "/private/tmp/sessions"))\n');
    expect(profile).not.toContain('/private/Users');
    // A read-only path under /tmp is denied in both forms too, or the twin's allow would win over it.
    const ro = at(
      profile,
      '(deny file-write* (literal "/tmp/sessions/primer.jsonl") (subpath "/tmp/sessions/primer.jsonl"))',
    );
    expect(
      at(
        profile,
        '(deny file-write* (literal "/private/tmp/sessions/primer.jsonl") (subpath "/private/tmp/sessions/primer.jsonl"))',
      ),
    ).toBeGreaterThan(ro);
  });

  it('twins /etc and a bare /tmp, but not a folder that only starts with the same letters', () => {
    const p = seatbeltProfile({ writable: ['/etc/x', '/tmp', '/variety', '/tmpfoo'], readOnly: [], cwd: '/tmp' });
    at(p, '(subpath "/private/etc/x")');
    at(p, '(subpath "/private/tmp")');
    expect(p).not.toContain('/private/variety');
    expect(p).not.toContain('/private/tmpfoo');
  });

  it('escapes a backslash and a double quote in a path', () => {
    const p = seatbeltProfile({
      writable: ['/Users/me/we"ird\\dir'],
      readOnly: ['/Users/me/we"ird\\dir/ro'],
      cwd: '/Users/me',
    });
    at(p, '(allow file-write* (subpath "/Users/me/we\\"ird\\\\dir"))\n');
    at(p, '(literal "/Users/me/we\\"ird\\\\dir/ro")');
    expect(p).not.toContain('we"ird');
  });

  it('drops a trailing slash, so the subpath matches the folder itself', () => {
    const p = seatbeltProfile({ writable: ['/Users/me/arm/'], readOnly: [], cwd: '/Users/me/arm' });
    at(p, '(allow file-write* (subpath "/Users/me/arm"))\n');
  });

  it('refuses a relative path, a newline and a NUL, with a one-line message', () => {
    const tries: SandboxPolicy[] = [
      { writable: ['arms/a1'], readOnly: [], cwd: '/x' },
      { writable: ['/x'], readOnly: ['ledger.json'], cwd: '/x' },
      { writable: ['/x\n(allow file-write* (subpath "/"))'], readOnly: [], cwd: '/x' },
      { writable: ['/x'], readOnly: ['/x/a\0b'], cwd: '/x' },
    ];
    for (const bad of tries) {
      let message = '';
      try {
        seatbeltProfile(bad);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/^seatbelt: /);
      expect(message).not.toContain('\n');
    }
    expect(() => seatbeltProfile(tries[0])).toThrow(/not absolute/);
    expect(() => seatbeltProfile(tries[2])).toThrow(/newline/);
  });
});

describe('wrapSeatbelt', () => {
  it('runs the program with -p <profile> -- command args', () => {
    const w = wrapSeatbelt('/usr/bin/sandbox-exec', policy, 'pi', ['--mode', 'json', '-p']);
    expect(w).toEqual({
      command: '/usr/bin/sandbox-exec',
      args: ['-p', seatbeltProfile(policy), '--', 'pi', '--mode', 'json', '-p'],
      wrappers: 0,
    });
  });
});
