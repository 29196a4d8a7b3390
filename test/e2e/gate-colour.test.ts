// A suite that asserts colour output gives the same verdict under `factory build`'s gates as in a plain shell, through
// the BUILT CLI (run `npm run build` first), the real pi under test and the scripted model: the user's shell forces
// colour (FORCE_COLOR=1), the suites check the real chalk's and picocolors' escape codes and kleur's rule (colour
// unless NO_COLOR / NODE_DISABLE_COLORS / FORCE_COLOR=0) under node:test, and the real kleur's under uvu. The gates add no variable: green at the first attempt.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, report } from '../../src/scripted/tape.js';
import { buildFixture, payloadFiles } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';
import { promptBench, type PromptBench } from '../helpers/factory.js';

const GATE = 'node --test colour.test.mjs';

const COLOUR_TEST = [
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import chalk from 'chalk';",
  "import pc from 'picocolors';",
  'const { FORCE_COLOR, NODE_DISABLE_COLORS, NO_COLOR, TERM } = process.env;',
  "const kleur = !NODE_DISABLE_COLORS && NO_COLOR == null && TERM !== 'dumb' && ((FORCE_COLOR != null && FORCE_COLOR !== '0') || process.stdout.isTTY);",
  "test('codes', () => assert.equal(chalk.red('x'), '\\x1b[31mx\\x1b[39m'));",
  "test('chains', () => assert.equal(pc.bold(pc.red('x')), '\\x1b[1m\\x1b[31mx\\x1b[39m\\x1b[22m'));",
  "test('kleur enabled', () => assert.equal(kleur, true));",
  '',
].join('\n');

/** The same assertions as kleur's own suite makes them: uvu, the real kleur, colour forced by the user's shell. */
const UVU_GATE = 'node_modules/.bin/uvu colour';
const UVU_TEST = [
  "import { test } from 'uvu';",
  "import * as assert from 'uvu/assert';",
  "import kleur from 'kleur';",
  `test('codes', () => assert.is(kleur.red('x'), ${JSON.stringify('\x1b[31mx\x1b[39m')}));`,
  'test.run();',
  '',
].join('\n');

const ROSTER = [
  "gateway: ''",
  'payload:',
  '  dir: .',
  '  commands:',
  `    - run: ${GATE}`,
  '      timeout: 60',
  `    - run: ${UVU_GATE}`,
  '      timeout: 60',
  'agents:',
  '  builder:',
  '    model: scripted/alpha',
  '',
].join('\n');

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('a colour-asserting suite under the gates (real pi, scripted model, built CLI)', () => {
  it('green in a plain shell with FORCE_COLOR=1, green under factory build at its first attempt (exit 0)', async () => {
    bench = await promptBench(
      {
        default: [
          call('write', { path: 'src/add.js', content: buildFixture('add.fixed.js') }),
          report({ status: 'success', summary: 'add written', changed_files: ['src/add.js'] }),
        ],
      },
      {
        ...payloadFiles('add'),
        '.gitignore': 'adws/adw_data/\nnode_modules/\n',
        'colour.test.mjs': COLOUR_TEST,
        'colour/kleur.mjs': UVU_TEST,
        'adws/adw_config/factory.config.yaml': ROSTER,
      },
    );
    const repo = bench.repo.dir;
    fs.mkdirSync(path.join(repo, 'node_modules'));
    for (const lib of ['chalk', 'picocolors', 'kleur', 'uvu'])
      fs.symlinkSync(path.resolve('node_modules', lib), path.join(repo, 'node_modules', lib));
    fs.mkdirSync(path.join(repo, 'node_modules', '.bin'));
    fs.symlinkSync(path.resolve('node_modules/uvu/bin.js'), path.join(repo, 'node_modules', '.bin', 'uvu'));
    const env = { ...bench.rig.env, CI: 'true', FORCE_COLOR: '1' };
    // The user's shell: the same command, the same environment (minus the cockpit's CI), pipes as a gate has them.
    const { CI: _ci, ...shellEnv } = env;
    for (const gate of [GATE, UVU_GATE])
      expect(spawnSync('bash', ['-c', gate], { cwd: repo, env: shellEnv, stdio: 'pipe' }).status, gate).toBe(0);
    const r = await runCli(['build', 'specs/add.md', '--no-ui', '--model', 'scripted/alpha', '--retries', '0'], {
      cwd: repo,
      env,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`gates: ✓ ${GATE}`));
    expect(r.stderr).toContain(`✓ ${UVU_GATE}`);
    expect(r.stderr).not.toMatch(/attempt_failed|failed —/);
  });
});
