// The spec's scope, read from its own words and the primer's plan: the files and folders they name, and what the
// spec puts out of scope. An arm's files beyond it (a rewritten CONTRIBUTING.md beside the asked change) are not a
// red verdict — the gates judge the work — but they are named wherever the arm is, rank it below an arm that stayed
// in scope whatever a cent or a second says, and applying it asks first. A spec that names no file has no scope
// here: nothing is flagged. Pure.
import path from 'node:path';

export interface SpecScope {
  /** Files named (repo-relative, as written). */
  files: Set<string>;
  /** Folders named (`src/`), each ending in `/`. */
  dirs: string[];
  /** Files or folders named under an "out of scope" heading or line: beyond even when named elsewhere. */
  outside: string[];
}

// A path as specs write it: at least a folder and a name, or a name with an extension (`README.md`, `src/x.ts`).
const TOKEN = /(?<![\w@/.:-])(?:\.\/)?((?:[\w@.-]+\/)+[\w@.-]*|[\w@-][\w@.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])/g;
const OUT_OF_SCOPE = /\bout[ -]of[ -]scope\b|\bnon-goals?\b|\bdo not (?:change|touch|edit)\b/i;
const HEADING = /^\s{0,3}#{1,6}\s/;

function tokens(text: string): string[] {
  const out: string[] = [];
  for (const match of text.replace(/\w+:\/\/\S+/g, ' ').matchAll(TOKEN)) {
    const token = match[1]!.replace(/[.,:;]+$/, '');
    // Not a path: a version (1.2.3), an abbreviation (e.g.), a bare dot.
    if (!/[A-Za-z]/.test(token) || /^(?:e\.g|i\.e|etc|vs)$/i.test(token) || token.length < 3) continue;
    out.push(token);
  }
  return out;
}

/**
 * What the spec's text and the primer's plan name. `outside`: what the spec names under an out-of-scope heading
 * (to the next heading), after an out-of-scope line that ends in a colon (to the next blank line), or on such a line.
 */
export function specScope(spec: string, plan = ''): SpecScope {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const outside = new Set<string>();
  let section = false;
  let block = false;
  for (const line of spec.split(/\r?\n/)) {
    if (HEADING.test(line)) {
      section = OUT_OF_SCOPE.test(line);
      block = false;
    } else if (line.trim() === '') block = false;
    else if (OUT_OF_SCOPE.test(line) && /:\s*$/.test(line)) block = true;
    // On a line that says it, what comes after the words is out of scope, what comes before is not.
    const at = section || block ? 0 : (OUT_OF_SCOPE.exec(line)?.index ?? line.length);
    for (const token of tokens(line.slice(at))) outside.add(token);
    for (const token of tokens(line.slice(0, at))) {
      if (token.endsWith('/')) dirs.add(token);
      else files.add(token);
    }
  }
  for (const token of tokens(plan)) {
    if (token.endsWith('/')) dirs.add(token);
    else files.add(token);
  }
  return { files, dirs: [...dirs], outside: [...outside] };
}

function stem(file: string): string {
  return path
    .basename(file)
    .replace(/(\.(test|spec))?\.[^.]+$/, '')
    .replace(/_test$/, '');
}

const TEST_PATH = /(^|\/)(tests?|__tests__|spec)\/|\.(test|spec)\.[^.]+$|_test\.[^.]+$/;
const LOCKS: Readonly<Record<string, string[]>> = {
  'package.json': ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lockb'],
  'Cargo.toml': ['Cargo.lock'],
  'pyproject.toml': ['uv.lock', 'poetry.lock'],
  'go.mod': ['go.sum'],
};

/** Whether `file` (repo-relative) is a file the spec or the plan names, under a folder they name, or goes with one. */
function inScope(file: string, scope: SpecScope): boolean {
  const named = (name: string) =>
    file === name || file.endsWith(`/${name}`) || (name.includes('/') && file === name.replace(/^\//, ''));
  if ([...scope.files].some(named)) return true;
  if (scope.dirs.some((dir) => file.startsWith(dir) || file.includes(`/${dir}`))) return true;
  // A test of a named file (farewell.js → test/farewell.test.js), a lock file of a named manifest.
  if (TEST_PATH.test(file) && [...scope.files].some((name) => stem(name) === stem(file))) return true;
  return Object.entries(LOCKS).some(
    ([manifest, locks]) =>
      locks.includes(path.basename(file)) && [...scope.files].some((name) => path.basename(name) === manifest),
  );
}

/** The files of an arm's patch beyond the spec's scope, in the patch's order; none when the spec names no file. */
export function beyondScope(files: readonly string[], scope: SpecScope): string[] {
  const knows = scope.files.size > 0 || scope.dirs.length > 0;
  const outside = (file: string) =>
    scope.outside.some((o) => file === o || (o.endsWith('/') && file.startsWith(o)) || file.endsWith(`/${o}`));
  return files.filter((file) => outside(file) || (knows && !inScope(file, scope)));
}

/** The files as one line: `beyond the spec: a, b (+3 more)`. */
export function beyondLine(beyond: readonly string[] | undefined, shown = 3): string | undefined {
  if (!beyond || beyond.length === 0) return undefined;
  const more = beyond.length - Math.min(shown, beyond.length);
  return `beyond the spec: ${beyond.slice(0, shown).join(', ')}${more > 0 ? ` (+${more} more)` : ''}`;
}
