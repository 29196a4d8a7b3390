// The node given to pi at spawn (`-e` per socle file) unless the project loads it itself, and what init seeds:
// no machine path, an older init's entry removed, the user's other entries kept.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rpcModeArgs } from '../../src/pi/argv.js';
import { nodeExtensionFiles, nodePackageEntry, NODE_EXTENSIONS, seedNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import { packageSource } from '../../src/config/paths.js';

const FACTORY = factoryRoot();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const temp = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-node-spawn-')));
  dirs.push(dir);
  return dir;
};

describe('the node at spawn', () => {
  it('a project without the node gets every socle file by absolute path; the factory itself and a loading entry get none', () => {
    const repo = temp();
    const files = nodeExtensionFiles(repo, FACTORY);
    expect(files).toEqual(NODE_EXTENSIONS.map((n) => path.join(FACTORY, '.pi', 'extensions', `${n}.ts`)));
    expect(rpcModeArgs({ sessionId: 's', sessionDir: '/d', extensions: files }).filter((a) => a === '-e')).toHaveLength(
      NODE_EXTENSIONS.length,
    );
    expect(nodeExtensionFiles(FACTORY, FACTORY)).toEqual([]);
    fs.mkdirSync(path.join(repo, '.pi'));
    fs.writeFileSync(
      path.join(repo, '.pi', 'settings.json'),
      JSON.stringify({ packages: [nodePackageEntry(packageSource(path.join(repo, '.pi'), FACTORY))] }),
    );
    expect(nodeExtensionFiles(repo, FACTORY)).toEqual([]);
    // A machine path that is not on this machine: pi skips it, the cockpit gives the node.
    fs.writeFileSync(
      path.join(repo, '.pi', 'settings.json'),
      JSON.stringify({ packages: [nodePackageEntry('../../prefix-old/lib/node_modules/factory-cockpit')] }),
    );
    expect(nodeExtensionFiles(repo, FACTORY)).toEqual(files);
  });

  it('seedNode writes no settings, copies the rules, and removes an older init entry only', () => {
    const repo = temp();
    const fresh = seedNode(repo, FACTORY);
    expect(fresh).toMatchObject({ removed: [], settingsChanged: false, rulesCopied: true });
    expect(fs.existsSync(path.join(repo, '.pi', 'settings.json'))).toBe(false);
    fs.writeFileSync(
      path.join(repo, '.pi', 'settings.json'),
      JSON.stringify({ theme: 'dark', packages: ['npm:x', nodePackageEntry('../../gone/factory-cockpit')] }),
    );
    const again = seedNode(repo, FACTORY);
    expect(again).toMatchObject({ removed: ['../../gone/factory-cockpit'], settingsChanged: true, rulesCopied: false });
    expect(JSON.parse(fs.readFileSync(path.join(repo, '.pi', 'settings.json'), 'utf8'))).toEqual({
      theme: 'dark',
      packages: ['npm:x'],
    });
  });
});
