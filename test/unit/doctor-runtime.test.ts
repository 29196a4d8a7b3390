// The doctor's word on Node: the cockpit's runtime judged by the release schedule (a date given, so the verdict is
// a pure function), the native SQLite binding that loads or does not, and the launcher's floor: an older Node gets
// one line and exit 2 before anything loads. The old Node is faked by a preload that rewrites process.versions
// (no Node below 20 is installed here): the launcher reads nothing else.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addonLoadCause,
  cockpitNodeVerdict,
  NODE_FLOOR,
  sqliteBindingVerdict,
} from '../../src/doctor/runtimeChecks.js';
import { factoryRoot } from '../../src/pi/resolve.js';

describe("the cockpit's Node", () => {
  it.each([
    ['v24.22.3', '2026-12-01', 'ok', 'Node 24.22.3, supported until 2028-04-30; pi runs on it too'],
    ['v22.23.5', '2026-12-01', 'ok', 'Node 22.23.5, supported until 2027-04-30; pi runs on it too'],
    ['v22.12.0', '2026-12-01', 'ok', 'Node 22.12.0, supported until 2027-04-30'],
    [
      'v20.20.2',
      '2026-12-01',
      'warn',
      'Node 20.20.2 reached its end of life on 2026-04-30: no security fixes any more',
    ],
    ['v20.20.2', '2026-03-01', 'ok', 'Node 20.20.2, supported until 2026-04-30'],
    ['v25.1.0', '2026-12-01', 'warn', 'Node 25.1.0 is a short-lived odd release'],
    ['v18.19.0', '2026-12-01', 'fail', "Node 18.19.0 is older than the cockpit's floor (20)"],
  ])('%s on %s: %s', (version, today, status, detail) => {
    const verdict = cockpitNodeVerdict(version, today);
    expect([verdict.status, verdict.detail]).toEqual([status, detail]);
    if (status !== 'ok') expect(verdict.fix).toMatch(/^install Node 24 LTS/);
  });

  it('the native binding: loads here; a binding built for another ABI is a failed check naming the rebuild', async () => {
    expect((await sqliteBindingVerdict()).status).toBe('ok');
    // Node's own words, as a user who switched Node with nvm meets them: the cause comes first, the path trimmed.
    const message =
      "The module '/home/u/.nvm/versions/node/v20.19.0/lib/node_modules/factory-cockpit/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 127. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).";
    const broken = await sqliteBindingVerdict(() => Promise.reject(new Error(message)), '/opt/factory');
    expect(broken).toEqual({
      status: 'fail',
      detail: `better-sqlite3 does not load: it was built for Node 20 (ABI 115), and this is Node ${process.versions.node} (ABI ${process.versions.modules})`,
      fix: `cd '/opt/factory' && PATH='${path.dirname(process.execPath)}':$PATH npm rebuild better-sqlite3 (rebuilds it for Node ${process.versions.node}; or run the cockpit on the Node it was installed with)`,
    });
    expect(addonLoadCause("Cannot find module '/a/b/build/Release/better_sqlite3.node'")).toBe(
      "Cannot find module 'better_sqlite3.node'",
    );
  });
});

describe('the launcher on a Node below the floor', () => {
  const bin = path.join(factoryRoot(), 'bin', 'factory.js');

  it('one line naming the version and the fix, exit 2, nothing loaded or written', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'old-node-'));
    const preload = path.join(dir, 'old-node.mjs');
    fs.writeFileSync(
      preload,
      "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.19.0' } });\n",
    );
    try {
      const out = spawnSync(process.execPath, ['--import', preload, bin, 'bon', 'specs/x.md', '--no-ui'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(out.status).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toBe(
        'factory: Node 18.19.0 is too old: the cockpit needs Node 20 or newer (20 is past its end of life; install Node 24 LTS, e.g. `nvm install 24`)\n',
      );
      expect(fs.readdirSync(dir)).toEqual(['old-node.mjs']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one floor: the launcher, the doctor and package.json engines agree', () => {
    expect(fs.readFileSync(bin, 'utf8')).toContain(`var FLOOR = ${NODE_FLOOR};`);
    const engines = (
      JSON.parse(fs.readFileSync(path.join(factoryRoot(), 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    expect(engines).toBe(`>=${NODE_FLOOR}`);
    // And the current Node passes it: the real CLI answers.
    expect(execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
