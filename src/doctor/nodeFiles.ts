// The node's files in the workspace: `.pi/settings.json` (absent, or parseable and naming no factory folder
// but this one: the cockpit gives pi its node at each start — a committed machine path is proposed for removal,
// never rewritten here: the doctor changes no tracked file) and `.pi/damage-control-rules.yaml` (parseable with the shape the
// damage-control extension accepts — it fails closed on a broken file, refusing every bash/write/edit).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { globToRegExp } from '../../.pi/lib/path-guard.js';
import {
  isFactoryPackage,
  loadsFactoryHere,
  NODE_EXTENSIONS,
  readProjectSettings,
  RULES_FILE_NAME,
} from '../pi/node.js';
import type { CheckResult, DoctorCheck, DoctorContext } from './types.js';

function prescription(ctx: DoctorContext): string {
  return `factory init --into ${ctx.root} (it writes the default rules; commit them)`;
}

function readText(file: string): { text: string } | { error: string } {
  try {
    return { text: readFileSync(file, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { error: code === 'ENOENT' ? 'missing' : `unreadable (${code ?? 'error'})` };
  }
}

/** The `packages` entry of the settings (in `piDir`) that points at the factory folder, if any. */
export function factoryEntry(packages: unknown, piDir: string, factoryRoot: string): unknown {
  if (!Array.isArray(packages)) return undefined;
  const target = path.resolve(factoryRoot);
  return packages.find((entry) => {
    const source = typeof entry === 'string' ? entry : (entry as { source?: unknown } | null)?.source;
    return typeof source === 'string' && /^(\.|\/)/.test(source) && path.resolve(piDir, source) === target;
  });
}

export function pointsAtFactory(packages: unknown, piDir: string, factoryRoot: string): boolean {
  return factoryEntry(packages, piDir, factoryRoot) !== undefined;
}

/**
 * The node's extension files a package entry's `extensions` filter keeps out, by pi's filter rules (a missing
 * key loads all; patterns select, `!pattern` excludes, `+path` forces in, `-path` forces out). A filter pi
 * would read otherwise (not a list of strings) keeps every one out. Pure.
 */
export function droppedByFilter(entry: unknown): string[] {
  const files = NODE_EXTENSIONS.map((name) => `.pi/extensions/${name}.ts`);
  if (typeof entry === 'string' || entry === null || typeof entry !== 'object' || !('extensions' in entry)) return [];
  const filter = (entry as { extensions: unknown }).extensions;
  if (!Array.isArray(filter) || filter.some((p) => typeof p !== 'string')) return files;
  const patterns = filter as string[];
  const plain = patterns.filter((p) => !/^[!+-]/.test(p));
  const matches = (p: string, file: string) =>
    globToRegExp(p.replace(/^\.\//, '')).test(file) ||
    globToRegExp(`${p.replace(/^\.\//, '').replace(/\/$/, '')}/**`).test(file);
  return files.filter((file) => {
    // `[]` loads none; only exclusions narrow everything; patterns select.
    let kept = patterns.length === 0 ? false : plain.length === 0 ? true : plain.some((p) => matches(p, file));
    if (patterns.some((p) => p.startsWith('!') && matches(p.slice(1), file))) kept = false;
    if (patterns.some((p) => p.startsWith('+') && p.slice(1).replace(/^\.\//, '') === file)) kept = true;
    if (patterns.some((p) => p.startsWith('-') && p.slice(1).replace(/^\.\//, '') === file)) kept = false;
    return !kept;
  });
}

export function settingsCheck(): DoctorCheck {
  return {
    id: 'node.settings',
    category: 'node',
    severity: 'required',
    title: '.pi/settings.json',
    async run(ctx): Promise<CheckResult> {
      const piDir = path.join(ctx.root, '.pi');
      const file = path.join(piDir, 'settings.json');
      const atSpawn = `the cockpit gives pi its node at each start from ${ctx.factoryRoot}`;
      const read = readProjectSettings(file);
      if (read.problem !== undefined) {
        const fix = /unreadable/.test(read.problem) ? `make ${file} readable` : `correct the JSON in ${file}`;
        return { status: 'fail', detail: `${read.problem}: pi skips it and runs without the project's settings`, fix };
      }
      if (read.settings === undefined) return { status: 'ok', detail: `none (${atSpawn})` };
      const parsed = read.settings;
      // The factory's own repo loads its extensions directly; any other repo gets the node at spawn time.
      if (path.resolve(ctx.root) === path.resolve(ctx.factoryRoot))
        return { status: 'ok', detail: 'parseable (the factory itself)' };
      const packages = (parsed as { packages?: unknown }).packages;
      const list = Array.isArray(packages) ? packages : [];
      const factoryEntries = list.filter((p) => isFactoryPackage(p, piDir) || loadsFactoryHere(p, piDir));
      if (factoryEntries.length === 0) return { status: 'ok', detail: `parseable, no machine path (${atSpawn})` };
      const sources = factoryEntries
        .map((p) => JSON.stringify(typeof p === 'string' ? p : (p as { source?: unknown }).source))
        .join(', ');
      // The doctor proposes; removing a committed entry is the user's commit (or `factory init`'s explicit run).
      const remove = `remove ${sources} from "packages" in ${file} and commit it (\`factory init\` does the removal)`;
      // Two installs of the factory: pi would load every node extension twice and not start.
      if (factoryEntries.length > 1) {
        return {
          status: 'fail',
          detail: `${file} loads the factory ${factoryEntries.length} times (${sources}): pi would load the node twice and refuse to start`,
          fix: remove,
        };
      }
      const entry = factoryEntries[0];
      if (!loadsFactoryHere(entry, piDir)) {
        return {
          status: 'warn',
          detail: `${file} names a factory folder that is not on this machine (${sources}): pi skips it, ${atSpawn}`,
          fix: remove,
        };
      }
      // A filter that drops one of the node's extensions makes every run fail "socle incomplete": say it here.
      const dropped = droppedByFilter(entry);
      if (dropped.length > 0) {
        return {
          status: 'fail',
          detail: `the packages entry ${sources} does not load ${dropped.join(', ')} (its extensions filter)`,
          fix: remove,
        };
      }
      // `factory doctor --layer node` writes this form on purpose: fine here, but a path on this machine only.
      if (factoryEntry(list, piDir, ctx.factoryRoot) !== undefined)
        return {
          status: 'ok',
          detail: `parseable, loads the node from ${ctx.factoryRoot} (a path on this machine: \`factory init\` drops it for the node given at each start)`,
        };
      return {
        status: 'warn',
        detail: `pi loads the node from ${sources}, another install than this cockpit (${ctx.factoryRoot}): a machine path, which a teammate's clone or another npm prefix does not have`,
        fix: remove,
      };
    },
  };
}

/** The rules file's shape, as damage-control reads it: `bash.deny`/`bash.ask` regex lists, `paths.protected`. */
export function rulesProblem(doc: unknown): string | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return 'a mapping with bash and paths expected';
  const root = doc as Record<string, unknown>;
  const unknown = Object.keys(root).filter((key) => key !== 'bash' && key !== 'paths');
  if (unknown.length > 0) return `unknown key(s) ${unknown.join(', ')}`;
  const lists: Array<[string, unknown, boolean]> = [];
  for (const [name, keys, regex] of [
    ['bash', ['deny', 'ask'], true],
    ['paths', ['protected'], false],
  ] as const) {
    const section = root[name];
    if (section === undefined || section === null) continue;
    if (typeof section !== 'object' || Array.isArray(section)) return `${name} must be a mapping`;
    for (const key of keys) lists.push([`${name}.${key}`, (section as Record<string, unknown>)[key], regex]);
  }
  for (const [where, value, regex] of lists) {
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
      return `${where} must be a list of strings`;
    if (!regex) continue;
    for (const source of value as string[]) {
      try {
        new RegExp(source);
      } catch {
        return `${where}: invalid regular expression ${JSON.stringify(source)}`;
      }
    }
  }
  return undefined;
}

export function rulesCheck(): DoctorCheck {
  return {
    id: 'node.rules',
    category: 'node',
    severity: 'required',
    title: `.pi/${RULES_FILE_NAME}`,
    async run(ctx): Promise<CheckResult> {
      const file = path.join(ctx.root, '.pi', RULES_FILE_NAME);
      const read = readText(file);
      if ('error' in read)
        return {
          status: 'fail',
          detail: `${file}: ${read.error} (damage-control then refuses every bash/write/edit)`,
          fix: prescription(ctx),
        };
      const { parse } = await import('yaml'); // only when a rules file is really there to read
      let doc: unknown;
      try {
        doc = parse(read.text);
      } catch (error) {
        return {
          status: 'fail',
          detail: `${file}: YAML syntax error: ${(error as Error).message.split('\n')[0]}`,
          fix: `correct the YAML in ${file}`,
        };
      }
      const problem = rulesProblem(doc);
      if (problem)
        return {
          status: 'fail',
          detail: `${file}: ${problem}`,
          fix: `correct ${file} (keys: bash.deny, bash.ask, paths.protected)`,
        };
      const d = doc as { bash?: { deny?: unknown[]; ask?: unknown[] }; paths?: { protected?: unknown[] } };
      const count = (list?: unknown[]) => list?.length ?? 0;
      return {
        status: 'ok',
        detail: `${count(d.bash?.deny)} deny, ${count(d.bash?.ask)} ask, ${count(d.paths?.protected)} protected`,
      };
    },
  };
}
