// The work tree's top-level read from the file system, for the cases where it answers exactly as
// `git rev-parse --show-toplevel` would: a plain repository found by walking up. Every start of a workspace command
// used to spawn git for it (~15 ms of the main thread before pi could start: the fork, then the sweep of what the
// child left). Anything git could read otherwise (its environment, a linked worktree or submodule, a bare
// repository, a setting or extension in the repository's config, another owner, a mount point, no git at all) is
// not guessed: the answer is then "ask git", and git is asked.
import fs from 'node:fs';
import path from 'node:path';
import { FactoryError } from '../contract/errors.js';

/** Variables that change where git looks for the repository or which one it takes. */
const DISCOVERY_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
];

/** Thrown inside the walk when git could answer otherwise than the file system suggests. */
class AskGit extends FactoryError {
  constructor(message = 'ask git') {
    super(message, 'error');
  }
}

function hasExecutable(name: string, pathValue: string | undefined): boolean {
  if (!pathValue) return false;
  for (const dir of pathValue.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).isFile()) {
        fs.accessSync(file, fs.constants.X_OK);
        return true;
      }
    } catch {
      // not here: the next folder of PATH
    }
  }
  return false;
}

function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new AskGit();
  }
}

function isSearchableDir(dir: string): boolean {
  try {
    if (!fs.statSync(dir).isDirectory()) return false;
    fs.accessSync(dir, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Git's own test of a repository folder (HEAD names a ref or holds an object id; objects/ and refs/ are there). */
function assertPlainRepository(gitDir: string, uid: number): void {
  const head = path.join(gitDir, 'HEAD');
  if (!fs.lstatSync(head).isFile()) throw new AskGit(); // a symbolic-link HEAD: rare, git's call
  const text = fs.readFileSync(head, 'utf8');
  if (!/^ref:\s*refs\//.test(text) && !/^(?:[0-9a-f]{40}|[0-9a-f]{64})\s*$/.test(text)) throw new AskGit();
  if (!isSearchableDir(path.join(gitDir, 'objects')) || !isSearchableDir(path.join(gitDir, 'refs'))) throw new AskGit();
  if (exists(path.join(gitDir, 'commondir'))) throw new AskGit(); // the folder of a linked worktree
  if (fs.lstatSync(gitDir).uid !== uid) throw new AskGit(); // safe.directory is git's to apply
  const config = path.join(gitDir, 'config');
  if (!exists(config)) return;
  const settings = fs.readFileSync(config, 'utf8');
  // core.worktree, core.bare (anything but false), an include, an extension, a format git may refuse.
  if (/worktree|include|\[\s*extensions/i.test(settings)) throw new AskGit();
  for (const line of settings.split('\n')) {
    if (/^\s*bare\b/i.test(line) && !/^\s*bare\s*=\s*false\s*(?:[#;].*)?$/i.test(line)) throw new AskGit();
    const version = /^\s*repositoryformatversion\s*=\s*(\S*)/i.exec(line)?.[1];
    if (version !== undefined && version !== '0' && version !== '1') throw new AskGit();
  }
}

/**
 * What `git rev-parse --show-toplevel` run in `dir` would print: the physical folder holding the first `.git` folder
 * above `dir`, or null where git would find no repository up to the root. Undefined whenever the file system alone
 * cannot be sure of git's answer (see the header): the caller then runs git.
 */
export function discoverTopLevel(dir: string, env: NodeJS.ProcessEnv = process.env): string | null | undefined {
  if (process.platform !== 'linux' || typeof process.geteuid !== 'function') return undefined;
  if (DISCOVERY_ENV.some((name) => env[name] !== undefined)) return undefined;
  const uid = process.geteuid();
  if (uid === 0 && env.SUDO_UID !== undefined) return undefined; // git would judge ownership by SUDO_UID
  // A git that cannot start answers nothing, and the caller then keeps the folder itself.
  if (!hasExecutable('git', env.PATH)) return undefined;
  try {
    let current = fs.realpathSync(dir); // git walks from its physical working directory
    const device = fs.statSync(current).dev;
    for (;;) {
      const stat = fs.statSync(current);
      if (stat.dev !== device) return undefined; // git stops at a mount point
      const dotGit = path.join(current, '.git');
      if (exists(dotGit)) {
        // A `.git` file (worktree, submodule), a link, or a folder git would pass over: git's call.
        if (!fs.lstatSync(dotGit).isDirectory()) return undefined;
        assertPlainRepository(dotGit, uid);
        if (stat.uid !== uid) return undefined;
        return current;
      }
      // A folder that may itself be a repository folder (bare, or inside `.git`): git's call.
      if (exists(path.join(current, 'HEAD'))) return undefined;
      const parent = path.dirname(current);
      if (parent === current) return null;
      current = parent;
    }
  } catch {
    return undefined; // AskGit, or a folder the walk cannot read
  }
}
