// What `factory init` writes as the gate runs on this machine: read from the repository's files (lock files, build
// files, a virtualenv) and from a controlled PATH (a temp bin folder holding only the programs a case gives it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guessGate } from '../../src/init/gateCommand.js';

let dir: string;
let repo: string;
let bin: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-init-gate-')));
  repo = path.join(dir, 'repo');
  bin = path.join(dir, 'bin');
  fs.mkdirSync(repo);
  fs.mkdirSync(bin);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A PATH holding only `programs` (each a stand-in script). */
function machine(...programs: string[]): NodeJS.ProcessEnv {
  for (const p of programs) fs.writeFileSync(path.join(bin, p), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return { PATH: bin };
}

function files(entries: Record<string, string>): void {
  for (const [rel, text] of Object.entries(entries)) {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), text);
  }
}

const PYPROJECT = '[project]\nname = "lib"\n';

describe('guessGate: a gate that runs here', () => {
  it('a Python project on a machine with python3 only writes python3 -m pytest, and says why', () => {
    files({ 'pyproject.toml': PYPROJECT });
    expect(guessGate(repo, undefined, machine('python3'))).toEqual({
      run: 'python3 -m pytest',
      from: 'the Python project files; python3 is on PATH',
      placeholder: false,
    });
  });

  it('with python only, python; with neither, python3 and the warning', () => {
    files({ 'setup.py': 'from setuptools import setup\nsetup()\n' });
    expect(guessGate(repo, undefined, machine('python'))).toMatchObject({
      run: 'python -m pytest',
      from: 'the Python project files; python is on PATH (no python3)',
    });
    expect(guessGate(repo, undefined, { PATH: path.join(dir, 'empty') })).toMatchObject({
      run: 'python3 -m pytest',
      from: expect.stringContaining('no python3 (nor python) on PATH here: install it'),
    });
  });

  it("uv, poetry, hatch (its test script or its own), pipenv, a virtualenv: the project's environment", () => {
    const env = machine('python3', 'uv', 'poetry', 'hatch', 'pipenv');
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ 'pyproject.toml': PYPROJECT, 'uv.lock': 'version = 1\n' }, 'uv run pytest', /^uv\.lock: /],
      [{ 'pyproject.toml': PYPROJECT, 'poetry.lock': '# poetry\n' }, 'poetry run pytest', /^poetry\.lock: /],
      [
        { 'pyproject.toml': `${PYPROJECT}[tool.hatch.envs.default.scripts]\ntest = "pytest {args}"\n` },
        'hatch run test',
        /test script/,
      ],
      [
        { 'pyproject.toml': `${PYPROJECT}[tool.hatch.version]\npath = "lib/__init__.py"\n` },
        'hatch test',
        /hatch's own test environment/,
      ],
      [{ 'pyproject.toml': PYPROJECT, 'hatch.toml': '[envs.default]\n' }, 'hatch test', /hatch's own/],
      [{ 'pyproject.toml': PYPROJECT, 'Pipfile.lock': '{}\n' }, 'pipenv run pytest', /^Pipfile\.lock: /],
      [{ 'pyproject.toml': PYPROJECT, '.venv/bin/python': '' }, '.venv/bin/python -m pytest', /repository's \.venv$/],
    ];
    for (const [entries, run, why] of cases) {
      fs.rmSync(repo, { recursive: true, force: true });
      fs.mkdirSync(repo);
      files(entries);
      const guess = guessGate(repo, undefined, env);
      expect(guess.run, JSON.stringify(entries)).toBe(run);
      expect(guess.from, run).toMatch(why);
    }
  });

  it("a manager the lock names but the machine lacks: still the repo's way, with the warning", () => {
    files({ 'pyproject.toml': PYPROJECT, 'uv.lock': 'version = 1\n' });
    expect(guessGate(repo, undefined, machine('python3')).from).toBe(
      "uv.lock: pytest in the project's uv environment; uv is not on PATH here: install it",
    );
  });

  it('JavaScript: the package manager from the lock file, named in the why', () => {
    const env = machine('npm', 'pnpm', 'yarn', 'bun');
    const manifest = { scripts: { test: 'mocha' } };
    expect(guessGate(repo, manifest, env)).toMatchObject({ run: 'npm test', from: 'package.json scripts.test' });
    for (const [lock, run, pm] of [
      ['pnpm-lock.yaml', 'pnpm test', 'pnpm'],
      ['yarn.lock', 'yarn test', 'yarn'],
      ['bun.lockb', 'bun run test', 'bun'],
    ] as const) {
      fs.rmSync(repo, { recursive: true, force: true });
      fs.mkdirSync(repo);
      files({ [lock]: '' });
      expect(guessGate(repo, manifest, env)).toMatchObject({
        run,
        from: `package.json scripts.test, with ${pm} (${lock})`,
      });
    }
  });

  it('a lock naming pnpm on a machine without it: a command that runs here, through npm, and the why says so', () => {
    files({ 'pnpm-lock.yaml': '' });
    const env = machine('npm');
    // scripts.test does not call pnpm itself: npm runs the same script.
    expect(guessGate(repo, { scripts: { test: 'vitest run' } }, env)).toMatchObject({
      run: 'npm test',
      from: 'package.json scripts.test, with pnpm (pnpm-lock.yaml); pnpm is not on PATH here: npm runs the same script',
    });
    // zustand's way: scripts.test runs pnpm over its test:* scripts; the suite's own script is proposed.
    const zustand = {
      scripts: {
        test: 'pnpm run "/^test:.*/"',
        'test:format': 'prettier --check .',
        'test:types': 'tsc --noEmit',
        'test:spec': 'vitest run',
      },
    };
    expect(guessGate(repo, zustand, env)).toMatchObject({
      run: 'npm run test:spec',
      from: 'pnpm is not on PATH here and scripts.test calls it: npm runs scripts["test:spec"] instead (also: test:format, test:types); install pnpm to gate on pnpm test',
    });
    // No other script: the repo's way, with the warning.
    expect(guessGate(repo, { scripts: { test: 'pnpm -r test' } }, env)).toMatchObject({
      run: 'pnpm test',
      from: 'package.json scripts.test, with pnpm (pnpm-lock.yaml); pnpm is not on PATH here: install it',
    });
  });

  it('cargo, go and make where they fit; a missing toolchain is said', () => {
    const env = machine('cargo', 'make');
    files({ 'Cargo.toml': '[package]\nname = "x"\n' });
    expect(guessGate(repo, undefined, env)).toMatchObject({ run: 'cargo test', from: 'Cargo.toml' });
    fs.rmSync(path.join(repo, 'Cargo.toml'));
    files({ 'go.mod': 'module x\n' });
    expect(guessGate(repo, undefined, env)).toMatchObject({
      run: 'go test ./...',
      from: 'go.mod; go is not on PATH here: install it',
    });
    fs.rmSync(path.join(repo, 'go.mod'));
    files({ Makefile: 'test:\n\techo ok\n', 'pyproject.toml': PYPROJECT });
    expect(guessGate(repo, undefined, env)).toMatchObject({ run: 'make test', from: 'the Makefile test target' });
  });
});
