// Which command proves a repository green: what `factory init` writes as the roster's payload gate. Read from
// the repository's own files (package.json scripts, the lock file that names its package manager, the usual
// build files of other ecosystems); when none says, a placeholder that fails and that the doctor flags.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

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
    throw new UsageError(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}); nothing was written`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${(error as Error).message.split('\n')[0]}); nothing was written`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${file} must hold a JSON object; nothing was written`);
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

/** The repository's own test command, or the placeholder. */
export function guessGate(root: string, manifest: Record<string, unknown> | undefined): GateGuess {
  const scripts = manifest?.scripts;
  const test = scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>).test : undefined;
  if (typeof test === 'string' && test.trim() !== '' && !NPM_DEFAULT_TEST.test(test)) {
    const pm = packageManager(root, manifest as { packageManager?: unknown });
    return { run: pm === 'bun' ? 'bun run test' : `${pm} test`, from: 'package.json scripts.test', placeholder: false };
  }
  if (exists(root, 'Cargo.toml')) return { run: 'cargo test', from: 'Cargo.toml', placeholder: false };
  if (exists(root, 'go.mod')) return { run: 'go test ./...', from: 'go.mod', placeholder: false };
  if (makefileHasTest(root)) return { run: 'make test', from: 'the Makefile test target', placeholder: false };
  if (exists(root, 'pyproject.toml') || exists(root, 'pytest.ini') || exists(root, 'setup.cfg')) {
    return { run: 'python -m pytest', from: 'the Python project files', placeholder: false };
  }
  return { run: PLACEHOLDER_GATE, from: 'no test command found', placeholder: true };
}

/** A command line as a YAML scalar: plain when that reads back the same, else double-quoted (JSON is valid YAML there). */
export function yamlScalar(text: string): string {
  return /^[A-Za-z0-9_./][A-Za-z0-9_ ./:=@+-]*$/.test(text) && !/\s#|:\s|\s$/.test(text) ? text : JSON.stringify(text);
}
