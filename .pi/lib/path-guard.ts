// The path guard of damage-control: where a write really lands, and whether the agent may write there. A write
// is allowed only inside the project (the folder pi runs in, ctx.cwd), judged on the real path the kernel
// would open (symlinks followed one component at a time, a dangling link included), outside the protected
// globs and inside the role's writable folders. The bash side (bash-guard.ts) uses the same places, with two
// extra kinds a shell redirection commonly needs: a few harmless devices and the OS temp folder.
import { lstatSync, readlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_ENV } from './contract.js';
import { writablePaths, writableRoots } from './writable.js';

/**
 * Protected whatever the rules file says: the guard's own code and rules, git's internals (a hook is code run
 * outside the agent's session) and the factory's data (patches, traces), which a later arm must not rewrite.
 * Repositories keep the rules file `factory init` copied once, so the shipped list alone would not reach them.
 */
export const FLOOR_PROTECTED = [
  '.git',
  '.git/**',
  'adws/adw_data/**',
  '.pi/damage-control-rules.yaml',
  '.pi/extensions/**',
  '.pi/lib/**',
  '.pi/settings.json',
];

/** Writing to these never leaves a file behind. */
const DEVICES = new Set(['/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr', '/dev/tty']);

export interface GuardOptions {
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Folders bash may write scratch files in (default: /tmp and the OS temp folder). */
  scratch?: string[];
  /** A best-of-N arm's fence: folders no tool may read or write (../lib/fence.ts). */
  fenced?: readonly string[];
}

export interface Guard {
  /** The project as pi names it, and its real path. */
  root: string;
  realRoot: string;
  home: string;
  realHome: string;
  protectedGlobs: string[];
  /** Real paths of the writable folders, and the entries as the roster wrote them (for messages). */
  writable: string[];
  writableShown: string[];
  scratch: string[];
}

/** A glob as an anchored regex: `*` stays in one folder, `**` crosses folders, `?` is one character. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slashAfter = glob[i + 2] === '/';
      out += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** The glob covering a project-relative POSIX path: with a "/" it matches the path, without one the file name. */
export function matchGlob(globs: string[], relative: string): string | null {
  const name = relative.split('/').pop() ?? '';
  for (const glob of globs) {
    const regex = globToRegExp(glob.replace(/^\.\//, ''));
    if (glob.includes('/') ? regex.test(relative) : regex.test(name)) return glob;
  }
  return null;
}

/**
 * The anchored glob whose files lie inside the folder `relative` (deleting the folder deletes them). With
 * `name`, only the entries of that folder whose name starts with it are taken (`rm -r .*` takes `.git`).
 */
export function globInside(globs: string[], relative: string, name?: string): string | null {
  const folder = relative === '' ? '' : `${relative}/`;
  for (const glob of globs) {
    if (!glob.includes('/')) continue;
    const clean = glob.replace(/^\.\//, '');
    const wild = clean.search(/[*?[]/);
    const fixed = wild < 0 ? clean : clean.slice(0, wild).replace(/\/[^/]*$/, '');
    if (fixed === '') continue;
    if (name === undefined ? fixed === relative || fixed.startsWith(folder) : fixed.startsWith(folder + name))
      return glob;
  }
  return null;
}

export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function posixRelative(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join('/');
}

/**
 * The path the kernel would open for `target` (relative to `base`): each component is looked up in turn, a
 * symlink is replaced by where it points (so `link/..` is the link target's parent, as for the kernel), and
 * the first missing component ends the walk. A dangling link therefore resolves to the file it would create.
 */
export function realTarget(target: string, base: string, depth = 0): string {
  if (depth > 40) throw new Error(`too many symbolic links under ${target}`);
  const whole = path.isAbsolute(target) ? target : `${base}${path.sep}${target}`;
  const parts = whole.split(path.sep).filter((part) => part !== '');
  let current = path.parse(whole).root || path.sep;
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i];
    if (part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let link: string | null = null;
    try {
      const stat = lstatSync(next);
      if (stat.isSymbolicLink()) link = readlinkSync(next);
    } catch {
      return path.join(current, ...parts.slice(i));
    }
    current = link === null ? next : realTarget(link, current, depth + 1);
  }
  return current;
}

export function makeGuard(cwd: string, protectedGlobs: string[], options: GuardOptions = {}): Guard {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const root = path.resolve(cwd);
  const realRoot = realTarget(root, path.sep);
  const globs = [...new Set([...protectedGlobs, ...FLOOR_PROTECTED])];
  // The node's data folder may be moved (FACTORY_DATA_DIR); wherever it is inside the project, it is the factory's.
  const dataDir = env[NODE_ENV.dataDir]?.trim();
  if (dataDir) {
    const real = realTarget(dataDir, root);
    if (isInside(real, realRoot) && real !== realRoot) globs.push(`${posixRelative(realRoot, real)}/**`);
  }
  const scratch = (options.scratch ?? ['/tmp', tmpdir()]).map((dir) => realTarget(dir, path.sep));
  return {
    root,
    realRoot,
    home,
    realHome: realTarget(home, path.sep),
    protectedGlobs: globs,
    writable: writableRoots(env, root, home).map((dir) => realTarget(dir, path.sep)),
    writableShown: writablePaths(env, root),
    scratch: [...new Set(scratch)],
  };
}

export type Place =
  | { kind: 'device' }
  | { kind: 'scratch'; top: boolean }
  /** wide: the folder holds the project or the home folder (/, ~, ..). escape: lexically inside, really not. */
  | { kind: 'outside'; real: string; wide: boolean; escape: boolean }
  /** top: the project folder itself. under: somewhere below this path (the rest of the word is unreadable). */
  | { kind: 'inside'; real: string; relatives: string[]; top: boolean; under: boolean };

/**
 * Where `target` (already free of `~`, `@`…) lands, seen from `base`; `under` for "a path below it".
 * `follow: false` is for commands that act on a link itself (rm, mv, find): only the folders above are followed.
 */
export function locate(target: string, base: string, guard: Guard, under = false, follow = true): Place {
  const lexical = path.resolve(base, target);
  if (!under && (DEVICES.has(lexical) || /^\/dev\/fd\/\d+$/.test(lexical))) return { kind: 'device' };
  const name = path.basename(target);
  const itself = !follow && !under && !target.endsWith('/') && name !== '.' && name !== '..' && name !== '';
  const real = itself
    ? path.join(realTarget(path.dirname(target), base), name)
    : realTarget(target === '' ? '.' : target, base);
  if (isInside(real, guard.realRoot)) {
    const relatives = [posixRelative(guard.realRoot, real)];
    if (isInside(lexical, guard.root)) relatives.push(posixRelative(guard.root, lexical));
    return { kind: 'inside', real, relatives: [...new Set(relatives)], top: real === guard.realRoot && !under, under };
  }
  const scratchRoot = guard.scratch.find((dir) => isInside(real, dir));
  if (scratchRoot) return { kind: 'scratch', top: real === scratchRoot && !under };
  const wide = isInside(guard.realRoot, real) || isInside(guard.realHome, real);
  return { kind: 'outside', real, wide, escape: isInside(lexical, guard.root) };
}

/** The protected glob a place inside the project falls under (for "below", any name in that folder). */
export function protectedRuleOf(place: Extract<Place, { kind: 'inside' }>, guard: Guard): string | null {
  for (const relative of place.relatives) {
    const probe = place.under ? `${relative === '' ? '' : `${relative}/`}\u0000` : relative;
    const glob = matchGlob(guard.protectedGlobs, probe);
    if (glob) return glob;
  }
  return null;
}

export function isWritable(place: Extract<Place, { kind: 'inside' }>, guard: Guard): boolean {
  return guard.writable.some((dir) => isInside(place.real, dir));
}

export function writableList(guard: Guard): string {
  return guard.writableShown.join(', ');
}

/** A tool's path as pi's write and edit tools read it: odd spaces normalized, a leading "@" dropped, `~` and file:// expanded. */
export function toolPath(raw: string, home: string): string {
  let p = raw.replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, ' ');
  if (p.startsWith('@')) p = p.slice(1);
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  if (/^file:\/\//.test(p)) {
    try {
      return fileURLToPath(p);
    } catch {
      return p;
    }
  }
  return p;
}

export type PathVerdict = { ok: true } | { ok: false; reason: string };

/** The write/edit tools' guard: inside the project (really), not protected, inside the writable folders. */
export function checkToolPath(raw: string, guard: Guard): PathVerdict {
  const target = toolPath(raw, guard.home);
  if (target.trim() === '') return { ok: true }; // the tool refuses an empty path itself
  let place: Place;
  try {
    place = locate(target, guard.root, guard);
  } catch (error) {
    return { ok: false, reason: `${raw} cannot be resolved (${(error as Error).message}) (intent write-outside)` };
  }
  if (place.kind !== 'inside') {
    const real = place.kind === 'outside' ? place.real : path.resolve(guard.root, target);
    const how = place.kind === 'outside' && place.escape ? ' through a symbolic link' : '';
    const where = real === raw ? `${raw} is` : `${raw} resolves${how} to ${real},`;
    return { ok: false, reason: `${where} outside the project ${guard.root} (intent write-outside)` };
  }
  const glob = protectedRuleOf(place, guard);
  if (glob) return { ok: false, reason: `${raw} is a protected path (rule "${glob}")` };
  if (!isWritable(place, guard)) {
    return {
      ok: false,
      reason: `${raw} is outside the writable folders of this role (${writableList(guard)}) (intent not-writable)`,
    };
  }
  return { ok: true };
}
