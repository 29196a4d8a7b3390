// The pi version known without spawning pi (package.json above its CLI file, else an earlier checkPi of the
// same file), and the flag it gates: --no-mcp only for pi ≥ 0.99.0. The two installed pis (the bundled floor
// and CI's ceiling, when installed) are read from their real package.json; fakes stand in for the rest.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { knownPiVersion, packageVersionAbove, piAcceptsNoMcp } from '../../src/pi/piVersion.js';
import { bundledPi, checkPi, factoryRoot, type PiCommand } from '../../src/pi/resolve.js';

const scratch = mkdtempSync(join(tmpdir(), 'factory-pi-version-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PI_PACKAGE = '@earendil-works/pi-coding-agent';

/** A fake pi package: package.json + dist/bundle/cli.js, like the npm tarball's layout. */
function fakePackage(dir: string, version: string, name = PI_PACKAGE): string {
  const cli = join(scratch, dir, 'dist', 'bundle', 'cli.js');
  mkdirSync(join(cli, '..'), { recursive: true });
  writeFileSync(join(scratch, dir, 'package.json'), JSON.stringify({ name, version }));
  writeFileSync(cli, '// not run\n');
  return cli;
}

const viaNode = (cli: string): PiCommand => ({
  command: process.execPath,
  prefixArgs: [cli],
  source: 'FACTORY_PI',
  display: cli,
});

describe('knownPiVersion', () => {
  it('reads the bundled pi from the package.json above its CLI', () => {
    const pi = bundledPi(factoryRoot())!;
    const manifest = JSON.parse(readFileSync(join(pi.prefixArgs[0]!, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(knownPiVersion(pi)).toBe(manifest.version);
  });

  const ceiling = join(factoryRoot(), '.ci/pi-latest/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js');
  it.runIf(existsSync(ceiling))('reads the ceiling pi of CI the same way, and gates --no-mcp on it', () => {
    const version = knownPiVersion(viaNode(ceiling));
    expect(version).toMatch(/^1\.\d+\.\d+/);
    expect(piAcceptsNoMcp(viaNode(ceiling))).toBe(true);
  });

  it('follows a link (node_modules/.bin/pi, a global npm link) to the real package', () => {
    const cli = fakePackage('linked', '1.2.3');
    const bin = join(scratch, 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(cli, join(bin, 'pi'));
    expect(knownPiVersion({ command: join(bin, 'pi'), prefixArgs: [], source: 'PATH', display: 'pi' })).toBe('1.2.3');
  });

  it("ignores a package.json that is not pi's, and knows nothing of a file without one", () => {
    const cli = fakePackage('other', '9.9.9', 'not-pi');
    expect(packageVersionAbove(cli)).toBeUndefined();
    expect(knownPiVersion(viaNode(cli))).toBeUndefined();
    expect(knownPiVersion(viaNode(join(scratch, 'missing.js')))).toBeUndefined();
  });

  it('without a package.json, remembers what checkPi saw for that same file (hand-written fake: a standalone binary)', async () => {
    const exe = join(scratch, 'standalone', 'pi');
    mkdirSync(join(exe, '..'), { recursive: true });
    writeFileSync(exe, '#!/bin/sh\necho 1.7.2\n');
    chmodSync(exe, 0o755);
    const cmd: PiCommand = { command: exe, prefixArgs: [], source: 'PATH', display: exe };
    expect(knownPiVersion(cmd)).toBeUndefined();
    expect(piAcceptsNoMcp(cmd)).toBe(false);
    expect(await checkPi(cmd)).toEqual({ version: '1.7.2' });
    expect(knownPiVersion(cmd)).toBe('1.7.2');
    expect(piAcceptsNoMcp(cmd)).toBe(true);
    // The same path, replaced (another size, another mtime): the remembered answer no longer applies.
    writeFileSync(exe, '#!/bin/sh\necho 0.85.3 # replaced\n');
    expect(knownPiVersion(cmd)).toBeUndefined();
  });
});

describe('piAcceptsNoMcp', () => {
  it.each([
    ['0.85.2', false],
    ['0.98.9', false],
    ['0.99.0', true],
    ['1.6.0', true],
  ])('pi %s → %s', (version, expected) => {
    expect(piAcceptsNoMcp(viaNode(fakePackage(`v-${version}`, version)))).toBe(expected);
  });
});
