// The factory's pi node (the socle extensions) in another repository. Two ways it loads:
// - at spawn time (what `factory init` sets up): the cockpit passes each socle file of its own folder to pi as
//   `-e <absolute path>` (nodeExtensionFiles), so the committed `.pi/` holds no path to this machine's install and
//   a teammate's clone, another clone depth or another npm prefix all load the node of the cockpit that runs;
// - by a `packages` entry in `<target>/.pi/settings.json` that points back at a factory folder (the older form,
//   still written by `factory doctor --layer node|station`): pi loads the node itself, and the cockpit then adds
//   no `-e` (the node twice makes pi refuse to start: `Tool "report_phase" conflicts with …`).
// The default damage-control rules are seeded either way when the target has none.
//
// What pi needs (checked on pi 0.85.1 and 1.6.0, see .pi/tests/node.test.ts):
// - a local package source is resolved relative to the settings file's folder and must look like a path
//   (`./` or `../`), otherwise pi reads it as an npm package name (and `npm:` would install from the registry
//   into `.pi/npm/`: there is no entry by name that finds a global install);
// - a package's resource filters only narrow what the package itself exposes, and without a `pi`
//   manifest a package exposes only its conventional `extensions/` folder — so the factory's
//   package.json carries `"pi": {"extensions": [".pi/extensions"]}` and the entry below filters it;
// - `-e <file>` loads that one file as an extension, before the project's trust (`--approve`) is even decided.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { packageSource } from '../config/paths.js';

/**
 * A project's `.pi/settings.json` as pi reads it: absent (nothing), an object, or why pi would skip it — pi then
 * runs on without the project's settings, saying nothing a run could see (the doctor's node.settings row and every
 * run's refusal before its first token read this one answer).
 */
export function readProjectSettings(file: string): { settings?: Record<string, unknown>; problem?: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? {} : { problem: `${file}: unreadable (${code ?? 'error'})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: `${file} is not valid JSON (${(error as Error).message.replace(/\s+/g, ' ').trim()})` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { problem: `${file} must hold a JSON object` };
  return { settings: parsed as Record<string, unknown> };
}

/** The socle as loaded into another repo; a name whose file does not exist yet simply matches nothing. */
export const NODE_EXTENSIONS = [
  'damage-control',
  'factory-obs',
  'factory-report',
  'factory-guard',
  'factory-inventory',
  'factory-compact',
  'factory-context',
] as const;

export const RULES_FILE_NAME = 'damage-control-rules.yaml';

export interface NodePackageEntry {
  source: string;
  extensions: string[];
  skills: string[];
  prompts: string[];
  themes: string[];
}

/** The station layer's entry: the whole package as a plain string source (all it exposes is loaded). */
export type PackageEntry = NodePackageEntry | string;

export interface InstallNodeResult {
  settingsFile: string;
  entry: NodePackageEntry;
  /** An entry with the same source was there and has been replaced. */
  replaced: boolean;
  /** The default rules were copied (the target had none). */
  rulesCopied: boolean;
}

/**
 * The source to write for the factory folder: relative when it lives in the target's tree (a dev dependency in its
 * node_modules, which every clone installs) or beside it as a checkout (the sibling layout a team can repeat);
 * absolute for an install elsewhere (a global npm prefix): a relative path up into a prefix breaks at another clone
 * depth, an absolute one at least holds for every clone on this machine.
 */
export function committableSource(piDir: string, target: string, factory: string): string {
  const real = (p: string): string => (existsSync(p) ? realpathSync(p) : path.resolve(p));
  const inTarget = !path.relative(real(target), real(factory)).startsWith('..');
  const installedElsewhere = !inTarget && real(factory).split(path.sep).includes('node_modules');
  return installedElsewhere ? path.resolve(factory).split(path.sep).join('/') : packageSource(piDir, factory);
}

export function nodePackageEntry(source: string): NodePackageEntry {
  return {
    source,
    extensions: NODE_EXTENSIONS.map((name) => `.pi/extensions/${name}.ts`),
    skills: [],
    prompts: [],
    themes: [],
  };
}

function sourceOf(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { source?: unknown }).source === 'string') {
    return (entry as { source: string }).source;
  }
  return undefined;
}

function isLocalPath(source: string): boolean {
  return source.startsWith('.') || source.startsWith('/') || path.isAbsolute(source);
}

/**
 * Whether a packages entry loads a factory cockpit — this one or another install of it (a global install moved to
 * another prefix, an older checkout): its folder holds the node's report extension, or, gone from disk, the entry
 * filters exactly the node's extensions. Two such entries make pi load every node extension twice, and it then
 * refuses to start (`Tool "report_phase" conflicts with …`).
 */
export function isFactoryPackage(entry: unknown, baseDir: string): boolean {
  const source = sourceOf(entry);
  if (source === undefined || !isLocalPath(source)) return false;
  const folder = path.resolve(baseDir, source);
  if (existsSync(path.join(folder, '.pi', 'extensions', 'factory-report.ts'))) return true;
  const filter =
    typeof entry === 'object' && entry !== null ? (entry as { extensions?: unknown }).extensions : undefined;
  const nodeFiles = new Set(NODE_EXTENSIONS.map((name) => `.pi/extensions/${name}.ts`));
  return (
    !existsSync(folder) &&
    Array.isArray(filter) &&
    filter.length > 0 &&
    filter.every((f) => typeof f === 'string' && nodeFiles.has(f))
  );
}

/**
 * `packages` with the node entry merged in: an entry whose source is the same folder (written as is, or resolving
 * to the same absolute path from `baseDir`), or another install of the factory, is replaced in place; others are kept.
 */
export function mergePackages(
  packages: unknown[],
  entry: PackageEntry,
  baseDir: string,
): { packages: unknown[]; replaced: boolean } {
  const entrySource = typeof entry === 'string' ? entry : entry.source;
  const target = path.resolve(baseDir, entrySource);
  const same = (existing: unknown): boolean => {
    const source = sourceOf(existing);
    if (source === undefined) return false;
    return (
      source === entrySource ||
      (isLocalPath(source) && path.resolve(baseDir, source) === target) ||
      isFactoryPackage(existing, baseDir)
    );
  };
  const merged: unknown[] = [];
  let replaced = false;
  for (const existing of packages) {
    if (!same(existing)) merged.push(existing);
    else if (!replaced) {
      merged.push(entry); // first duplicate keeps its place; later ones are dropped
      replaced = true;
    }
  }
  if (!replaced) merged.push(entry);
  return { packages: merged, replaced };
}

function readSettings(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${(error as Error).message}); nothing was written`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`${file} must hold a JSON object; nothing was written`);
  }
  const settings = parsed as Record<string, unknown>;
  if (settings.packages !== undefined && !Array.isArray(settings.packages)) {
    throw new Error(`${file}: "packages" must be an array; nothing was written`);
  }
  return settings;
}

/** Write/merge the node entry into `<targetRepo>/.pi/settings.json` and seed the damage-control rules. */
export function installNode(targetRepo: string, factoryRoot: string): InstallNodeResult {
  return installEntry(targetRepo, factoryRoot, nodePackageEntry) as InstallNodeResult;
}

export interface InstallStationResult extends Omit<InstallNodeResult, 'entry'> {
  entry: string;
}

/**
 * The station layer: the factory's whole package (a string source, so pi loads everything its manifest
 * exposes, not only the socle), merged like the node entry, with the same rules seeding.
 */
export function installStation(targetRepo: string, factoryRoot: string): InstallStationResult {
  return installEntry(targetRepo, factoryRoot, (source) => source) as InstallStationResult;
}

function installEntry(
  targetRepo: string,
  factoryRoot: string,
  entryFor: (source: string) => PackageEntry,
): { settingsFile: string; entry: PackageEntry; replaced: boolean; rulesCopied: boolean } {
  const target = path.resolve(targetRepo);
  if (!existsSync(target) || !statSync(target).isDirectory()) {
    throw new Error(`target repository ${target} does not exist or is not a folder; nothing was written`);
  }
  const factory = path.resolve(factoryRoot);
  const rulesSource = path.join(factory, '.pi', RULES_FILE_NAME);
  if (!existsSync(path.join(factory, '.pi', 'extensions'))) {
    throw new Error(`${factory} is not a factory folder (no .pi/extensions); nothing was written`);
  }
  const piDir = path.join(target, '.pi');
  const settingsFile = path.join(piDir, 'settings.json');
  const settings = readSettings(settingsFile); // refuses before anything is written

  const entry = entryFor(committableSource(piDir, target, factory));
  const { packages, replaced } = mergePackages((settings.packages as unknown[] | undefined) ?? [], entry, piDir);
  mkdirSync(piDir, { recursive: true });
  const temporary = `${settingsFile}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ ...settings, packages }, null, 2)}\n`, 'utf8');
  renameSync(temporary, settingsFile);

  const rulesTarget = path.join(piDir, RULES_FILE_NAME);
  let rulesCopied = false;
  if (!existsSync(rulesTarget) && existsSync(rulesSource)) {
    copyFileSync(rulesSource, rulesTarget);
    rulesCopied = true;
  }
  return { settingsFile, entry, replaced, rulesCopied };
}

/** The packages entries of `<dir>/.pi/settings.json` (none when the file is absent or not what pi reads). */
function settingsPackages(dir: string): unknown[] {
  try {
    const parsed = JSON.parse(readFileSync(path.join(dir, '.pi', 'settings.json'), 'utf8')) as { packages?: unknown };
    return Array.isArray(parsed.packages) ? parsed.packages : [];
  } catch {
    return [];
  }
}

/** Whether a packages entry names a factory folder that is on this disk (pi then loads the node from it). */
export function loadsFactoryHere(entry: unknown, piDir: string): boolean {
  const source = sourceOf(entry);
  return (
    source !== undefined &&
    isLocalPath(source) &&
    existsSync(path.join(path.resolve(piDir, source), '.pi', 'extensions', 'factory-report.ts'))
  );
}

/**
 * Whether pi started in `cwd` loads a factory node by itself: the factory's own tree (or an arm's worktree of it),
 * whose project extensions are the node, or a settings entry naming a factory folder that exists here.
 */
export function projectLoadsNode(cwd: string): boolean {
  if (existsSync(path.join(cwd, '.pi', 'extensions', 'factory-report.ts'))) return true;
  const piDir = path.join(cwd, '.pi');
  return settingsPackages(cwd).some((entry) => loadsFactoryHere(entry, piDir));
}

/** The node's files in `factoryRoot` that a pi started in `cwd` is given with `-e`: none when the project loads the node. */
export function nodeExtensionFiles(cwd: string, factoryRoot: string): string[] {
  if (projectLoadsNode(cwd)) return [];
  return NODE_EXTENSIONS.map((name) => path.join(path.resolve(factoryRoot), '.pi', 'extensions', `${name}.ts`)).filter(
    (file) => existsSync(file),
  );
}

export interface SeedNodeResult {
  settingsFile: string;
  /** The settings' factory entries init removed (machine paths of an older init): the node loads at spawn now. */
  removed: string[];
  /** The settings file was rewritten (only when entries were removed). */
  settingsChanged: boolean;
  rulesCopied: boolean;
}

/**
 * What `factory init` writes for the node: nothing machine-bound. Factory entries an older init committed are
 * removed from `.pi/settings.json` (other entries and keys are kept; the file is not created when absent), and
 * the default damage-control rules are copied when the target has none. The node itself loads at spawn time.
 */
export function seedNode(targetRepo: string, factoryRoot: string): SeedNodeResult {
  const target = path.resolve(targetRepo);
  if (!existsSync(target) || !statSync(target).isDirectory()) {
    throw new Error(`target repository ${target} does not exist or is not a folder; nothing was written`);
  }
  const factory = path.resolve(factoryRoot);
  if (!existsSync(path.join(factory, '.pi', 'extensions'))) {
    throw new Error(`${factory} is not a factory folder (no .pi/extensions); nothing was written`);
  }
  const piDir = path.join(target, '.pi');
  const settingsFile = path.join(piDir, 'settings.json');
  const settings = readSettings(settingsFile); // refuses before anything is written
  const packages = (settings.packages as unknown[] | undefined) ?? [];
  const removed = packages.filter((entry) => isFactoryPackage(entry, piDir) || loadsFactoryHere(entry, piDir));
  let settingsChanged = false;
  if (removed.length > 0) {
    const temporary = `${settingsFile}.${process.pid}.tmp`;
    writeFileSync(
      temporary,
      `${JSON.stringify({ ...settings, packages: packages.filter((entry) => !removed.includes(entry)) }, null, 2)}\n`,
      'utf8',
    );
    renameSync(temporary, settingsFile);
    settingsChanged = true;
  }
  mkdirSync(piDir, { recursive: true });
  const rulesTarget = path.join(piDir, RULES_FILE_NAME);
  const rulesSource = path.join(factory, '.pi', RULES_FILE_NAME);
  let rulesCopied = false;
  if (!existsSync(rulesTarget) && existsSync(rulesSource)) {
    copyFileSync(rulesSource, rulesTarget);
    rulesCopied = true;
  }
  return {
    settingsFile,
    removed: removed.map((entry) => sourceOf(entry) ?? JSON.stringify(entry)),
    settingsChanged,
    rulesCopied,
  };
}
