// The role's writable folders (FACTORY_WRITABLE, from the roster's `agents.<role>.writable`), read one way by
// both extensions that use them: factory-context tells the model, damage-control enforces. Each entry is a
// path, relative to the project (the folder pi runs in) or absolute; a path covers itself and everything
// below it. Entries are plain paths, not globs: the roster schema says "a path", and a glob taken literally
// matches nothing, which refuses writes rather than widening them.
import { homedir } from 'node:os';
import path from 'node:path';
import { NODE_ENV } from './contract.js';

/** The entries of a FACTORY_WRITABLE value: comma-separated, trimmed, empty ones dropped, first occurrence kept. */
export function writableEntries(value: string | undefined): string[] {
  const listed = (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return [...new Set(listed)];
}

/** What the model is told: the entries as written, or the project folder when the role names none. */
export function writablePaths(env: NodeJS.ProcessEnv, projectDir: string): string[] {
  const listed = writableEntries(env[NODE_ENV.writable]);
  return listed.length > 0 ? listed : [projectDir];
}

/** What damage-control enforces: the same entries as absolute paths (`~` is the home folder, as pi reads it). */
export function writableRoots(env: NodeJS.ProcessEnv, projectDir: string, home: string = homedir()): string[] {
  return writablePaths(env, projectDir).map((entry) => {
    if (entry === '~') return home;
    if (entry.startsWith('~/')) return path.join(home, entry.slice(2));
    return path.resolve(projectDir, entry);
  });
}
