// A user's repository, built by the tests with the traits real ones have: its own test runner (spot, see
// ./spotRunner.ts) behind `npm test`, which colours its output whatever the environment says and keeps a cache
// under node_modules/.cache; dependencies installed by npm from a local folder (no network); an ignored `.env`
// with a key; a nested package (`packages/shout/`) with its own package.json and node_modules; the factory's
// pi node and a roster whose payload gate is `npm test`. Everything is committed except the ignored parts.
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { workspacePaths } from '../../src/config/paths.js';
import { installNode } from '../../src/pi/node.js';
import { factoryRoot } from '../../src/pi/resolve.js';
import type { Tapes } from '../../src/scripted/tape.js';
import type { BonBench } from './bon.js';
import { git } from './repo.js';
import { startRig } from './rig.js';
import { SPOT_RUNNER } from './spotRunner.js';

export const USER_SPEC = 'specs/farewell.md';
export const FAREWELL = 'src/farewell.js';
/** What a good arm writes: it uses the installed dependency, as the rest of the code does. */
export const FAREWELL_GOOD =
  "import { capitalize } from 'case-kit';\n\nexport function farewell(name) {\n  return `Goodbye, ${capitalize(name)}!`;\n}\n";
export const FAREWELL_BUGGY = 'export function farewell(name) {\n  return `Bye, ${name}.`;\n}\n';
/** The key in the user's ignored `.env` (the factory masks it; the gates never get it). */
export const DOTENV_KEY = 'sk-or-v1-userworld-0123456789abcdef';

const CASE_KIT = {
  'package.json': `${JSON.stringify({ name: 'case-kit', version: '1.2.0', type: 'module', main: 'index.js', bin: { 'case-kit': 'bin/case-kit.js' } }, null, 2)}\n`,
  'index.js':
    'export const capitalize = (word) => word.charAt(0).toUpperCase() + word.slice(1);\nexport const upper = (text) => text.toUpperCase();\n',
  'bin/case-kit.js':
    "#!/usr/bin/env node\nimport { upper } from '../index.js';\nconsole.log(upper(process.argv.slice(2).join(' ')));\n",
};

/** Used by packages/shout only, installed in its own node_modules (the root has none of it). */
const PAD_KIT = {
  'package.json': `${JSON.stringify({ name: 'pad-kit', version: '0.3.1', type: 'module', main: 'index.js' }, null, 2)}\n`,
  'index.js': "export const padEnd = (text, width) => text + ' '.repeat(Math.max(0, width - text.length));\n",
};

const ROSTER = [
  '# The payload gate is what the user runs: npm test (spot, over the root and packages/shout).',
  'gateway: ""',
  'harness: pi',
  'payload:',
  '  dir: .',
  '  commands:',
  '    - run: npm test',
  '      timeout: 120',
  '',
].join('\n');

export const USER_FILES: Record<string, string> = {
  'README.md':
    '# greetings\n\nGreets people and says goodbye. `npm test` runs spot over the library and packages/shout.\n',
  '.gitignore': 'node_modules/\n.env\nadws/adw_data/\n',
  '.env': `OPENROUTER_API_KEY=${DOTENV_KEY}\n`,
  'package.json': `${JSON.stringify({ name: 'greetings', version: '1.0.0', type: 'module', private: true, scripts: { test: 'node tools/spot.mjs . packages/shout' } }, null, 2)}\n`,
  'tools/spot.mjs': SPOT_RUNNER,
  'src/greet.js':
    "import { capitalize } from 'case-kit';\n\nexport function greet(name) {\n  return `Hello, ${capitalize(name)}!`;\n}\n",
  'test/greet.test.js':
    "import assert from 'node:assert/strict';\nimport { greet } from '../src/greet.js';\n\ndescribe('greet', () => {\n  it('greets by name', () => {\n    assert.equal(greet('ada'), 'Hello, Ada!');\n  });\n});\n",
  'test/farewell.test.js':
    "import assert from 'node:assert/strict';\nimport { farewell } from '../src/farewell.js';\n\ndescribe('farewell', () => {\n  it('says goodbye', () => {\n    assert.equal(farewell('ada'), 'Goodbye, Ada!');\n  });\n});\n",
  [USER_SPEC]:
    '# farewell\n\nAdd `src/farewell.js` exporting `farewell(name)` that returns `Goodbye, <Name>!` (the name capitalized with\n`case-kit`). `npm test` must pass (test/farewell.test.js).\n',
  'packages/shout/package.json': `${JSON.stringify({ name: 'shout', version: '0.1.0', type: 'module', private: true, scripts: { test: 'node ../../tools/spot.mjs' } }, null, 2)}\n`,
  'packages/shout/src/shout.js':
    "import { upper } from 'case-kit';\nimport { padEnd } from 'pad-kit';\n\nexport const shout = (text, width = 0) => padEnd(`${upper(text)}!`, width);\n",
  'packages/shout/test/shout.test.js':
    "import assert from 'node:assert/strict';\nimport { shout } from '../src/shout.js';\n\ndescribe('shout', () => {\n  it('shouts', () => {\n    assert.equal(shout('hey'), 'HEY!');\n  });\n  it('pads', () => {\n    assert.equal(shout('hey', 6), 'HEY!  ');\n  });\n});\n",
  'adws/adw_config/factory.config.yaml': ROSTER,
};

function npm(cwd: string, ...args: string[]): void {
  execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** Writes the user's repo in `dir` (a new folder), installs its dependencies and the pi node, commits. */
export function createUserRepo(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const repo = fs.realpathSync(dir);
  // The local packages live next to the repo, as a user's sibling checkouts would.
  const vendor = (name: string, files: Record<string, string>): string => {
    const folder = path.join(path.dirname(repo), 'vendor', name);
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      fs.writeFileSync(path.join(folder, file), text);
    }
    return folder;
  };
  const caseKit = vendor('case-kit', CASE_KIT);
  const padKit = vendor('pad-kit', PAD_KIT);
  for (const [name, text] of Object.entries(USER_FILES)) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    fs.writeFileSync(path.join(repo, name), text);
  }
  // A real install, from the local folder: a copy in node_modules (not a link), its .bin, npm's metadata.
  npm(repo, 'install', '--install-links', caseKit);
  npm(path.join(repo, 'packages/shout'), 'install', '--install-links', caseKit, padKit);
  installNode(repo, factoryRoot());
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'A User');
  git(repo, 'config', 'user.email', 'user@example.invalid');
  git(repo, 'config', 'commit.gpgsign', 'false');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'greetings');
  return repo;
}

/** A bench for bon and build: the user's repo plus a rig (real pi + scripted model); shaped as BonBench. */
export async function userWorld(tapes: Tapes): Promise<BonBench> {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-user-')));
  const dir = createUserRepo(path.join(scratch, 'greetings'));
  const rig = await startRig({ tapes });
  return {
    rig,
    dir,
    paths: workspacePaths(dir),
    env: { ...process.env, ...rig.env }, // as bonBench: the rig's agent dir and FACTORY_PI, the pi under test
    cleanup: async () => {
      await rig.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * Every file of the user's tree, tracked and ignored (node_modules and its caches, `.env`), as path → sha256
 * (a symlink as its target). `.git` and adws/adw_data — the factory's own runtime data — are left out.
 */
export function treeChecksum(dir: string): Map<string, string> {
  const sums = new Map<string, string>();
  const skip = new Set(['.git', path.join('adws', 'adw_data')]);
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (skip.has(child)) continue;
      const abs = path.join(dir, child);
      if (entry.isSymbolicLink()) sums.set(child, `link:${fs.readlinkSync(abs)}`);
      else if (entry.isDirectory()) walk(child);
      else sums.set(child, createHash('sha256').update(fs.readFileSync(abs)).digest('hex'));
    }
  };
  walk('');
  return sums;
}

/** The paths added, removed or changed between two checksums, sorted. */
export function checksumDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((p) => before.get(p) !== after.get(p)).sort();
}

/** The user's own `npm test` in their tree, in a plain environment (their terminal's, not the factory's). */
export function userNpmTest(dir: string): { code: number | null; output: string } {
  const result = spawnSync('npm', ['test'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
