// Which command proves a repository green: what `factory init` writes as the roster's payload gate. Read from
// the repository's own files (package.json scripts, the lock file that names its package manager, the usual
// build files of other ecosystems); when none says, a placeholder that fails and that the doctor flags.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../contract/errors.js';
import { resolveProgram } from '../gates/program.js';

/** Marker of the placeholder gate: a command that fails on purpose until the user writes theirs. */
export const PLACEHOLDER_MARK = 'no gate command yet';
export const PLACEHOLDER_GATE = `echo '${PLACEHOLDER_MARK}: set payload.commands in adws/adw_config/factory.config.yaml' >&2; exit 1`;

/** npm writes this as `scripts.test` in every `npm init`: it is no test command. */
const NPM_DEFAULT_TEST = /no test specified/;

export interface GateGuess {
  /** The command line the gate runs (`bash -c`). */
  run: string;
  /** Where it came from, for the roster comment and init's report. */
  from: string;
  placeholder: boolean;
}

function exists(root: string, name: string): boolean {
  return fs.existsSync(path.join(root, name));
}

/** The package manager a JavaScript repository uses, from its lock file (npm when none says otherwise). */
function packageManager(root: string, manifest: { packageManager?: unknown }): 'npm' | 'pnpm' | 'yarn' | 'bun' {
  const declared = typeof manifest.packageManager === 'string' ? manifest.packageManager.split('@')[0] : undefined;
  if (declared === 'pnpm' || declared === 'yarn' || declared === 'bun') return declared;
  if (exists(root, 'pnpm-lock.yaml')) return 'pnpm';
  if (exists(root, 'yarn.lock')) return 'yarn';
  if (exists(root, 'bun.lock') || exists(root, 'bun.lockb')) return 'bun';
  return 'npm';
}

/**
 * package.json read as the user wrote it. An unreadable or invalid one is refused (UsageError, nothing
 * written): init must not guess around a file the user's own tools would choke on.
 */
export function readManifest(root: string): Record<string, unknown> | undefined {
  const file = path.join(root, 'package.json');
  if (!fs.existsSync(file)) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}); nothing was written`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${(error as Error).message.split('\n')[0]}); nothing was written`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError(`${file} must hold a JSON object; nothing was written`);
  return parsed as Record<string, unknown>;
}

function makefileHasTest(root: string): boolean {
  for (const name of ['Makefile', 'makefile', 'GNUmakefile']) {
    try {
      if (/^test\s*:/m.test(fs.readFileSync(path.join(root, name), 'utf8'))) return true;
    } catch {
      // no such file
    }
  }
  return false;
}

/** Whether `program` is on this machine's PATH (init writes a gate that runs here). */
function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  return resolveProgram(program, { cwd: process.cwd(), env }).found === 'file';
}

/** `why`, with a warning when the program the gate starts is not on PATH here (the doctor fails it until it is). */
function runsHere(run: string, why: string, root: string, env: NodeJS.ProcessEnv): GateGuess {
  const program = run.split(' ')[0]!;
  const found = program.includes('/') ? fs.existsSync(path.join(root, program)) : onPath(program, env);
  return { run, from: found ? why : `${why}; ${program} is not on PATH here: install it`, placeholder: false };
}

function readText(root: string, name: string): string {
  try {
    return fs.readFileSync(path.join(root, name), 'utf8');
  } catch {
    return '';
  }
}

/** A Python repository: the usual project or test-configuration files. */
function isPython(root: string): boolean {
  return ['pyproject.toml', 'pytest.ini', 'setup.cfg', 'setup.py', 'tox.ini'].some((name) => exists(root, name));
}

/** hatch's own test script (`[tool.hatch.envs.default.scripts]` or hatch.toml's `[envs.default.scripts]` with `test =`). */
function hatchTestScript(root: string): boolean {
  for (const [file, table] of [
    ['pyproject.toml', 'tool.hatch.envs.default.scripts'],
    ['hatch.toml', 'envs.default.scripts'],
  ] as const) {
    const text = readText(root, file);
    const at = text.indexOf(`[${table}]`);
    if (at < 0) continue;
    const body = text.slice(at).split('\n').slice(1);
    const end = body.findIndex((line) => /^\s*\[/.test(line));
    if ((end < 0 ? body : body.slice(0, end)).some((line) => /^\s*test\s*=/.test(line))) return true;
  }
  return false;
}

/**
 * How a Python repository's tests run on this machine: through the environment manager its lock or config names
 * (uv, poetry, hatch, pipenv), else the repository's own virtualenv, else the interpreter on PATH (`python3` or
 * `python`, whichever is here).
 */
function pythonGate(root: string, env: NodeJS.ProcessEnv): GateGuess {
  if (exists(root, 'uv.lock'))
    return runsHere('uv run pytest', "uv.lock: pytest in the project's uv environment", root, env);
  if (exists(root, 'poetry.lock'))
    return runsHere('poetry run pytest', "poetry.lock: pytest in the project's poetry environment", root, env);
  if (exists(root, 'hatch.toml') || /^\[tool\.hatch[\].]/m.test(readText(root, 'pyproject.toml'))) {
    return hatchTestScript(root)
      ? runsHere('hatch run test', "hatch's config: its default environment's test script", root, env)
      : runsHere('hatch test', "hatch's config: hatch's own test environment", root, env);
  }
  if (exists(root, 'Pipfile.lock'))
    return runsHere('pipenv run pytest', "Pipfile.lock: pytest in the project's pipenv environment", root, env);
  for (const venv of ['.venv', 'venv']) {
    if (fs.existsSync(path.join(root, venv, 'bin', 'python')))
      return runsHere(
        `${venv}/bin/python -m pytest`,
        `the Python project files, with the repository's ${venv}`,
        root,
        env,
      );
  }
  if (onPath('python3', env))
    return { run: 'python3 -m pytest', from: 'the Python project files; python3 is on PATH', placeholder: false };
  if (onPath('python', env))
    return {
      run: 'python -m pytest',
      from: 'the Python project files; python is on PATH (no python3)',
      placeholder: false,
    };
  return {
    run: 'python3 -m pytest',
    from: 'the Python project files; no python3 (nor python) on PATH here: install it',
    placeholder: false,
  };
}

/** The lock file that named the package manager, for init's one line. */
function lockOf(root: string, pm: string, manifest: { packageManager?: unknown }): string {
  if (typeof manifest.packageManager === 'string' && manifest.packageManager.startsWith(`${pm}@`))
    return `package.json packageManager`;
  const lock =
    { pnpm: ['pnpm-lock.yaml'], yarn: ['yarn.lock'], bun: ['bun.lock', 'bun.lockb'], npm: ['package-lock.json'] }[pm] ??
    [];
  return lock.find((name) => exists(root, name)) ?? 'no other lock file';
}

/**
 * The repository's own test command, run the way this machine can (`env`'s PATH decides `python3` or `python`), with
 * why it was chosen (init says it in one line, the roster keeps it as a comment); the placeholder when none says.
 */
export function guessGate(
  root: string,
  manifest: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): GateGuess {
  const scripts = manifest?.scripts;
  const test = scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>).test : undefined;
  if (typeof test === 'string' && test.trim() !== '' && !NPM_DEFAULT_TEST.test(test)) {
    const pm = packageManager(root, manifest as { packageManager?: unknown });
    const why =
      pm === 'npm'
        ? 'package.json scripts.test'
        : `package.json scripts.test, with ${pm} (${lockOf(root, pm, manifest as { packageManager?: unknown })})`;
    if (pm !== 'npm' && !onPath(pm, env) && onPath('npm', env))
      return npmInstead(pm, test, scripts as Record<string, unknown>, why, root, env);
    return runsHere(pm === 'bun' ? 'bun run test' : `${pm} test`, why, root, env);
  }
  if (exists(root, 'Cargo.toml')) return runsHere('cargo test', 'Cargo.toml', root, env);
  if (exists(root, 'go.mod')) return runsHere('go test ./...', 'go.mod', root, env);
  if (makefileHasTest(root)) return runsHere('make test', 'the Makefile test target', root, env);
  if (isPython(root)) return pythonGate(root, env);
  return { run: PLACEHOLDER_GATE, from: 'no test command found', placeholder: true };
}

/**
 * The lock names a package manager this machine lacks: a gate that runs here instead, through npm — `npm test` when
 * scripts.test does not call that manager itself, else a `test:*` script that does not (the suite's own: test:spec,
 * test:unit…) — and the why says what was chosen and what installing the manager would run. None: the manager's
 * way, with the warning.
 */
function npmInstead(
  pm: string,
  test: string,
  scripts: Record<string, unknown>,
  why: string,
  root: string,
  env: NodeJS.ProcessEnv,
): GateGuess {
  const callsPm = (body: string) => new RegExp(`(^|[\\s;&|(])${pm}(\\s|$)`).test(body);
  if (!callsPm(test))
    return { run: 'npm test', from: `${why}; ${pm} is not on PATH here: npm runs the same script`, placeholder: false };
  const named = Object.entries(scripts).filter(
    (e): e is [string, string] => /^test[:-]/.test(e[0]) && typeof e[1] === 'string' && !callsPm(e[1]),
  );
  const preferred = ['test:spec', 'test:unit', 'test:run'];
  const pick = named.find(([name]) => preferred.includes(name)) ?? named[0];
  if (!pick) return runsHere(pm === 'bun' ? 'bun run test' : `${pm} test`, why, root, env);
  const others = named.filter(([name]) => name !== pick[0]).map(([name]) => name);
  return {
    run: `npm run ${pick[0]}`,
    from: `${pm} is not on PATH here and scripts.test calls it: npm runs scripts["${pick[0]}"] instead${others.length > 0 ? ` (also: ${others.join(', ')})` : ''}; install ${pm} to gate on ${pm} test`,
    placeholder: false,
  };
}

/** A command line as a YAML scalar: plain when that reads back the same, else double-quoted (JSON is valid YAML there). */
export function yamlScalar(text: string): string {
  return /^[A-Za-z0-9_./][A-Za-z0-9_ ./:=@+-]*$/.test(text) && !/\s#|:\s|\s$/.test(text) ? text : JSON.stringify(text);
}
