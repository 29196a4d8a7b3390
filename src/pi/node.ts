// Installing the factory's pi node (the socle extensions) into another repository: a `packages` entry in
// `<target>/.pi/settings.json` that points back at the factory folder, plus the default damage-control
// rules when the target has none. pi then loads the socle from the factory itself (no copy to drift),
// once the target project is trusted (`--approve` in the non-interactive modes the factory uses).
//
// What pi needs (checked on pi 0.85.1, see .pi/tests/node.test.ts):
// - a local package source is resolved relative to the settings file's folder and must look like a path
//   (`./` or `../`), otherwise pi reads it as an npm package name;
// - a package's resource filters only narrow what the package itself exposes, and without a `pi`
//   manifest a package exposes only its conventional `extensions/` folder — so the factory's
//   package.json carries `"pi": {"extensions": [".pi/extensions"]}` and the entry below filters it.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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

/** `from` → `to` as a POSIX relative path that pi reads as a local path (always `./` or `../`). */
export function packageSource(fromDir: string, toDir: string): string {
  const relative = path.relative(path.resolve(fromDir), path.resolve(toDir));
  if (path.isAbsolute(relative)) return relative.split(path.sep).join('/'); // another drive: stays absolute
  const posix = relative.split(path.sep).join('/');
  if (posix === '') return '.';
  return posix.startsWith('../') || posix === '..' ? posix : `./${posix}`;
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
  const filter = typeof entry === 'object' && entry !== null ? (entry as { extensions?: unknown }).extensions : undefined;
  const nodeFiles = new Set(NODE_EXTENSIONS.map((name) => `.pi/extensions/${name}.ts`));
  return !existsSync(folder) && Array.isArray(filter) && filter.length > 0 && filter.every((f) => typeof f === 'string' && nodeFiles.has(f));
}

/**
 * `packages` with the node entry merged in: an entry whose source is the same folder (written as is, or resolving
 * to the same absolute path from `baseDir`), or another install of the factory, is replaced in place; others are kept.
 */
export function mergePackages(packages: unknown[], entry: PackageEntry, baseDir: string): { packages: unknown[]; replaced: boolean } {
  const entrySource = typeof entry === 'string' ? entry : entry.source;
  const target = path.resolve(baseDir, entrySource);
  const same = (existing: unknown): boolean => {
    const source = sourceOf(existing);
    if (source === undefined) return false;
    return source === entrySource || (isLocalPath(source) && path.resolve(baseDir, source) === target) || isFactoryPackage(existing, baseDir);
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

function installEntry(targetRepo: string, factoryRoot: string, entryFor: (source: string) => PackageEntry): { settingsFile: string; entry: PackageEntry; replaced: boolean; rulesCopied: boolean } {
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

  const entry = entryFor(packageSource(piDir, factory));
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
