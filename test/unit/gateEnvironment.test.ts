// A gate runs the user's command as the user's shell runs it: the same environment, nothing added or removed (a
// variable that quiets colour changes what a suite that asserts colour does), colour read out of the output
// afterwards. Real suites on real runners: node:test with the real chalk and picocolors and kleur's own rule, uvu
// with the real kleur (as kleur's own tests run), pytest with --color=yes; each gives the same verdict under the gate as under a plain `bash -c`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandGate } from '../../src/gates/judges.js';

/** Escape and control bytes a terminal interprets (tab and newline are text). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-gate-env-')));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The user's environment as a shell that forces colour has it (FORCE_COLOR=1, as kleur's and chalk's users set it). */
function colourShell(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '1' };
  for (const name of [
    'NO_COLOR',
    'NODE_DISABLE_COLORS',
    'CLICOLOR',
    'PY_COLORS',
    'npm_config_color',
    'NPM_CONFIG_COLOR',
    'CI',
  ])
    delete env[name];
  return env;
}

/** The verdict of `run` in a plain shell: bash -c, in `cwd`, with `env` (pipes, as a CI job has them). */
function plainShell(run: string, cwd: string, env: NodeJS.ProcessEnv): boolean {
  return (
    spawnSync('bash', ['--norc', '--noprofile', '-c', run], { cwd, env, stdio: 'pipe', timeout: 60_000 }).status === 0
  );
}

describe("a gate's environment", () => {
  it('is the one it is given, byte for byte: no colour variable added, none removed', async () => {
    const env = {
      PATH: process.env.PATH,
      HOME: '/home/ada',
      FORCE_COLOR: '3',
      CLICOLOR_FORCE: '1',
      NPM_CONFIG_COLOR: 'always',
    };
    const report = await commandGate(
      {
        run: 'env | grep -v "^\\(PWD\\|SHLVL\\|_\\|FACTORY_RUN_TAG\\|FACTORY_SPAWN_ID\\|OLDPWD\\)=" | sort',
        cwd: dir,
        timeoutMs: 5000,
      },
      { env },
    )();
    expect(report.ok, report.motif).toBe(true);
    expect(report.outputTail).toBe(
      'CLICOLOR_FORCE=1\nFORCE_COLOR=3\nHOME=/home/ada\nNPM_CONFIG_COLOR=always\nPATH=' + process.env.PATH + '\n',
    );
  });

  it('node:test asserting chalk, picocolors and kleur escape codes: green in the gate as in the shell', async () => {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    for (const lib of ['chalk', 'picocolors'])
      fs.symlinkSync(path.resolve('node_modules', lib), path.join(dir, 'node_modules', lib));
    fs.writeFileSync(
      path.join(dir, 'colour.test.mjs'),
      [
        "import test from 'node:test';",
        "import assert from 'node:assert/strict';",
        "import chalk from 'chalk';",
        "import pc from 'picocolors';",
        '// kleur decides so (kleur/index.mjs): colour unless NODE_DISABLE_COLORS, NO_COLOR, TERM=dumb; FORCE_COLOR≠0 or a TTY.',
        'const { FORCE_COLOR, NODE_DISABLE_COLORS, NO_COLOR, TERM } = process.env;',
        "const kleur = !NODE_DISABLE_COLORS && NO_COLOR == null && TERM !== 'dumb' && ((FORCE_COLOR != null && FORCE_COLOR !== '0') || process.stdout.isTTY);",
        "test('codes', () => assert.equal(chalk.red('x'), '\\x1b[31mx\\x1b[39m'));",
        "test('chains', () => assert.equal(pc.bold(pc.red('x')), '\\x1b[1m\\x1b[31mx\\x1b[39m\\x1b[22m'));",
        "test('kleur enabled', () => assert.equal(kleur, true));",
        '',
      ].join('\n'),
    );
    const run = 'node --test colour.test.mjs';
    const env = colourShell();
    expect(plainShell(run, dir, env)).toBe(true);
    const report = await commandGate({ run, cwd: dir, timeoutMs: 60_000 }, { env })();
    expect(report.ok, report.motif).toBe(true);
  });

  it("uvu asserting the real kleur's escape codes (kleur's own test setup): the same verdict as in the shell; red, the motif names the test in plain text", async () => {
    // The checkout's own uvu and kleur (dev dependencies), as a user's repo has them installed.
    fs.symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
    fs.mkdirSync(path.join(dir, 'test'));
    const suite = (expected: string) =>
      [
        "import { test } from 'uvu';",
        "import * as assert from 'uvu/assert';",
        "import kleur from 'kleur';",
        `test('codes', () => assert.is(kleur.red('x'), ${JSON.stringify(expected)}));`,
        `test('chains', () => assert.is(kleur.bold().red('x'), ${JSON.stringify('\x1b[1m\x1b[31mx\x1b[22m\x1b[39m')}));`,
        'test.run();',
        '',
      ].join('\n');
    fs.writeFileSync(path.join(dir, 'test', 'colour.mjs'), suite('\x1b[31mx\x1b[39m'));
    const run = 'node_modules/.bin/uvu test';
    const env = colourShell();
    expect(plainShell(run, dir, env)).toBe(true);
    const green = await commandGate({ run, cwd: dir, timeoutMs: 60_000 }, { env })();
    expect(green.ok, green.motif).toBe(true);

    // A suite that fails, in the same colour-forcing shell: red in both; uvu prints its report in colour, the gate's
    // motif and tail are plain text and name the failing test.
    fs.writeFileSync(path.join(dir, 'test', 'colour.mjs'), suite('\x1b[32mx\x1b[39m'));
    expect(plainShell(run, dir, env)).toBe(false);
    const red = await commandGate({ run, cwd: dir, timeoutMs: 60_000 }, { env })();
    expect(red.ok).toBe(false);
    expect(red.motif).toMatch(/FAIL .*"codes"/);
    expect(red.motif).not.toMatch(CONTROL);
    expect(red.outputTail).not.toMatch(CONTROL);
  });

  it('pytest --color=yes with a test of colour output: the same verdict as in the shell; red, its motif is plain text', async () => {
    fs.writeFileSync(
      path.join(dir, 'paint.py'),
      [
        'import os, sys',
        '# termcolor decides so: NO_COLOR and ANSI_COLORS_DISABLED turn colour off, FORCE_COLOR on, else a TTY.',
        'def can_colour():',
        "    if 'ANSI_COLORS_DISABLED' in os.environ or 'NO_COLOR' in os.environ: return False",
        "    if 'FORCE_COLOR' in os.environ: return True",
        '    return sys.stdout.isatty()',
        'def red(text):',
        "    return f'\\x1b[31m{text}\\x1b[0m' if can_colour() else text",
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(dir, 'test_paint.py'),
      ['from paint import red', 'def test_red():', "    assert red('x') == '\\x1b[31mx\\x1b[0m'", ''].join('\n'),
    );
    const run = 'python3 -m pytest --color=yes -q -p no:cacheprovider';
    const env = colourShell();
    expect(plainShell(run, dir, env)).toBe(true);
    const green = await commandGate({ run, cwd: dir, timeoutMs: 60_000 }, { env })();
    expect(green.ok, green.motif).toBe(true);

    // The same suite in a shell that asks for no colour: red in both, and the gate's motif is read as plain text.
    const quiet: NodeJS.ProcessEnv = { ...env, NO_COLOR: '1' };
    delete quiet.FORCE_COLOR;
    expect(plainShell(run, dir, quiet)).toBe(false);
    const red = await commandGate({ run, cwd: dir, timeoutMs: 60_000 }, { env: quiet })();
    expect(red.ok).toBe(false);
    expect(red.motif).toContain("assert 'x' == ");
    expect(red.motif).not.toMatch(CONTROL);
    expect(red.outputTail).not.toMatch(CONTROL);
  });
});
