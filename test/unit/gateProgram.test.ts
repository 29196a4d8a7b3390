// A gate that cannot run is never green: its programs are looked up as `bash -c` looks them up (a controlled PATH:
// a temp bin folder holding only bash, sh and a python3), a missing one named with the fix; a gate that ends as bash
// ends when it cannot find or run a program is a setup failure, which no baseline excuses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandGate } from '../../src/gates/judges.js';
import { gatePreflight, gatePrograms, missingProgram, resolveProgram } from '../../src/gates/program.js';
import { runGateList } from '../../src/engine/payloadGates.js';
import { gateSignature } from '../../src/gates/baseline.js';
import { Run } from '../../src/engine/runner.js';

let dir: string;
let bin: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-gate-program-')));
  bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync('/bin/bash', path.join(bin, 'bash'));
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
  // The machine has python3 only (no `python`): a stand-in that says which interpreter ran and exits 0.
  fs.writeFileSync(path.join(bin, 'python3'), '#!/bin/bash\necho "python3 $*"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a program\n', { mode: 0o644 });
  env = { PATH: bin, HOME: dir };
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('gatePrograms', () => {
  it('names the programs a command line starts, past assignments, keywords, wrappers and operators', () => {
    expect(gatePrograms('python -m pytest')).toEqual(['python']);
    expect(gatePrograms('CI=1 FOO="a b" npm test && make lint; ./run.sh | tee out')).toEqual([
      'npm',
      'make',
      './run.sh',
      'tee',
    ]);
    expect(gatePrograms('timeout 60 node --test && nice -n 5 make')).toEqual(['timeout', 'node', 'nice', 'make']);
    expect(gatePrograms('env A=1 uv run pytest')).toEqual(['env', 'uv']);
    // Where the lookup stops being the gate's: another folder, another PATH, a function of the command line.
    expect(gatePrograms('npm ci && cd sub && ./run.sh')).toEqual(['npm']);
    expect(gatePrograms('export PATH="$PWD/bin:$PATH"; mytool')).toEqual([]);
    expect(gatePrograms('PATH=./bin:$PATH; mytool')).toEqual([]);
    expect(gatePrograms('PATH=./bin mytool && make')).toEqual(['make']);
    expect(gatePrograms('env -i PATH=/opt/bin prog')).toEqual(['env']);
    expect(gatePrograms('t() { pytest "$@"; }; t -q')).toEqual([]);
    expect(gatePrograms('for f in a b; do echo "$f"; done')).toEqual(['echo']);
    expect(gatePrograms('if [ -f x ]; then "my tool" --flag; fi # pythn')).toEqual(['[', 'my tool']);
    expect(gatePrograms('$PYTHON -m pytest')).toEqual([]);
  });
});

describe('resolveProgram and missingProgram (a PATH with python3 only)', () => {
  it('finds builtins, files on PATH and paths from the gate folder; says what is missing or not executable', () => {
    const lookup = { cwd: dir, env };
    expect(resolveProgram('cd', lookup)).toEqual({ found: 'builtin' });
    expect(resolveProgram('python3', lookup)).toEqual({ found: 'file', file: path.join(bin, 'python3') });
    expect(resolveProgram('python', lookup)).toEqual({ found: 'missing' });
    expect(resolveProgram('./notes.txt', lookup)).toEqual({
      found: 'not-executable',
      file: path.join(dir, 'notes.txt'),
    });
    expect(resolveProgram('./bin/python3', lookup)).toEqual({ found: 'file', file: path.join(bin, 'python3') });
  });

  it('`python -m pytest` and `pythn -m pytest`: python3 is on PATH, the fix is the command with it', () => {
    const lookup = { cwd: dir, env };
    expect(missingProgram('python -m pytest', lookup)).toEqual({
      program: 'python',
      problem: 'not found on PATH',
      fix: 'python3 is on PATH: use `python3 -m pytest` in payload.commands in adws/adw_config/factory.config.yaml',
    });
    expect(missingProgram('pythn -m pytest', lookup)?.fix).toBe(
      'python3 is on PATH: use `python3 -m pytest` in payload.commands in adws/adw_config/factory.config.yaml',
    );
    expect(missingProgram('cargo test', lookup)?.fix).toBe(
      'install cargo (or put it on PATH), or write the command that runs your tests in payload.commands in adws/adw_config/factory.config.yaml',
    );
    expect(missingProgram('./notes.txt', lookup)?.problem).toBe(`is not executable (${path.join(dir, 'notes.txt')})`);
    expect(missingProgram('python3 -m pytest && cd . && echo ok', lookup)).toBeUndefined();
  });

  it('the pre-flight names the first gate that cannot start, with its index in the roster', () => {
    const commands = [
      { run: 'python3 -m pytest', cwd: dir },
      { run: 'pythn -m mypy .', cwd: dir },
    ];
    expect(gatePreflight(commands, env)).toBe(
      'gate `pythn -m mypy .` cannot run: pythn not found on PATH — python3 is on PATH: use `python3 -m mypy .` in payload.commands[1] in adws/adw_config/factory.config.yaml',
    );
    expect(gatePreflight(commands.slice(0, 1), env)).toBeUndefined();
    expect(gatePreflight([], env, { run: 'npm ci', cwd: dir })).toMatch(
      /^gate `npm ci` cannot run: npm not found on PATH — .* in payload\.setup in /,
    );
  });
});

describe('a gate that cannot run is a setup failure', () => {
  it('bash\'s "command not found" (exit 127): outcome setup, the command and the fix in its motif', async () => {
    const report = await commandGate({ run: 'pythn -m pytest', cwd: dir, timeoutMs: 10_000 }, { env })();
    expect(report.ok).toBe(false);
    expect(report.outcome).toBe('setup');
    expect(report.motif).toBe(
      '`pythn -m pytest` cannot run: pythn: command not found — python3 is on PATH: use `python3 -m pytest` in payload.commands in adws/adw_config/factory.config.yaml',
    );
  });

  it("a program a script runs further in (npm's `sh: 1: mocha: not found`), a file that is no program (126)", async () => {
    const nested = await commandGate({ run: "sh -c 'mocha test/'", cwd: dir, timeoutMs: 10_000 }, { env })();
    expect(nested.outcome).toBe('setup');
    expect(nested.motif).toMatch(/^`sh -c 'mocha test\/'` cannot run: mocha: not found — /);
    const denied = await commandGate({ run: './notes.txt', cwd: dir, timeoutMs: 10_000 }, { env })();
    expect(denied.outcome).toBe('setup');
    expect(denied.motif).toMatch(/cannot run: \.\/notes\.txt: Permission denied — make \.\/notes\.txt executable/);
  });

  it('python -m of a module the interpreter lacks', async () => {
    const report = await commandGate({ run: 'python3 -m no_such_runner_xyz', cwd: dir, timeoutMs: 10_000 })();
    expect(report.outcome).toBe('setup');
    expect(report.motif).toMatch(
      /cannot run: python3[\d.]* has no module no_such_runner_xyz — install no_such_runner_xyz for python3/,
    );
  });

  it('a test that fails is a test result, not a setup failure', async () => {
    const report = await commandGate({ run: 'echo "1 failed"; exit 1', cwd: dir, timeoutMs: 10_000 }, { env })();
    expect(report.ok).toBe(false);
    expect(report.outcome).toBeUndefined();
  });

  it('is never excused by the baseline, even when HEAD failed the same way', async () => {
    const head = await commandGate({ run: 'pythn -m pytest', cwd: dir, timeoutMs: 10_000 }, { env })();
    const run = new Run('adw_build', dir);
    const verdict = await runGateList({
      run,
      phase: 'arm_1',
      cwd: dir,
      changedFiles: [],
      commands: [{ run: 'pythn -m pytest', cwd: dir, timeoutMs: 10_000 }],
      signal: new AbortController().signal,
      env,
      preexisting: new Map([[head.gate, gateSignature(head, dir)]]),
    });
    expect(verdict.excused).toEqual([]);
    expect(verdict.setup?.gate).toBe('pythn -m pytest');
    expect(verdict.motif).toMatch(/^`pythn -m pytest` cannot run: /);
  });
});

describe('the roster file the fixes name', () => {
  it("is the roster's own", async () => {
    const { ROSTER_FILE } = await import('../../src/config/roster.js');
    expect(gatePreflight([{ run: 'pythn', cwd: dir }], env)).toContain(` in ${ROSTER_FILE}`);
  });
});

describe('what is no setup failure', () => {
  it('a test whose own redirection is refused (`sh: 1: cannot create /x: Permission denied`) is a test result', async () => {
    const report = await commandGate(
      { run: "echo 'sh: 1: cannot create /x: Permission denied' >&2; exit 2", cwd: dir, timeoutMs: 10_000 },
      { env },
    )();
    expect(report.ok).toBe(false);
    expect(report.outcome).toBeUndefined();
  });
});

describe('make, whose recipe runs a missing program', () => {
  it('is a setup failure naming the program', async () => {
    fs.writeFileSync(path.join(dir, 'Makefile'), 'test:\n\tpythn -m pytest\n');
    const report = await commandGate({ run: 'make test', cwd: dir, timeoutMs: 10_000 })();
    expect(report.outcome).toBe('setup');
    expect(report.motif).toMatch(
      /^`make test` cannot run: pythn: (No such file or directory|command not found|not found) — /,
    );
  });
});
