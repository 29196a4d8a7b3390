// The doctor's prescription (`factory doctor --layer node|station --into <repo>`): give another git
// repository the factory's pi layer by merging one `packages` entry into its `.pi/settings.json`, so pi
// started there (trusted with `--approve`) loads the extensions straight from this factory folder.
//
// The merge itself lives in src/pi/node.ts (installNode / installStation); this module adds what the
// command promises on top of it: only a git repository is a target, the factory never prescribes itself,
// and every refusal is one line, raised before anything is written.
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError, errorMessage, firstLine } from '../contract/errors.js';
import { installNode, installStation, type PackageEntry } from '../pi/node.js';

const PRESCRIPTION_LAYERS = ['node', 'station'] as const;

/** `node` = the socle extensions only; `station` = the whole factory package. */
export type PrescriptionLayer = (typeof PRESCRIPTION_LAYERS)[number];

export interface PrescribeOptions {
  layer: PrescriptionLayer;
  /** The repository to prescribe into (its root or any folder inside its work tree). */
  into: string;
  /** The factory folder whose `.pi` node is prescribed. */
  factoryRoot: string;
}

export interface Prescription {
  layer: PrescriptionLayer;
  settingsFile: string;
  /** The entry now in `packages`: the node's filtered object, or the station's plain string source. */
  entry: PackageEntry;
  /** An entry with the same source was there and has been replaced in place. */
  replaced: boolean;
  /** The factory's default damage-control rules were copied (the target had none). */
  rulesCopied: boolean;
}

/**
 * A refused prescription: one line, exit 2, the target left exactly as it was. A UsageError (whose
 * `name` stays 'UsageError'), so the command line maps it to exit 2 like any other bad input.
 */
export class PrescriptionError extends UsageError {}

/** Reads a `--layer` value; anything else is refused in one line. */
export function parseLayer(value: unknown): PrescriptionLayer {
  if (typeof value === 'string' && (PRESCRIPTION_LAYERS as readonly string[]).includes(value))
    return value as PrescriptionLayer;
  const shown = value === undefined || value === '' ? 'nothing' : JSON.stringify(value);
  throw new PrescriptionError(`--layer must be node or station, got ${shown}`);
}

/**
 * The work tree `dir` belongs to, found by walking up to a `.git` entry (a folder, or a file for a linked
 * worktree or a submodule) — a filesystem probe, so no git process is spawned for it.
 */
function gitWorkTreeOf(dir: string): string | undefined {
  for (let current = dir; ; current = path.dirname(current)) {
    if (existsSync(path.join(current, '.git'))) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

function realFolder(dir: string, what: string): string {
  const absolute = path.resolve(dir);
  if (!existsSync(absolute)) throw new PrescriptionError(`${what} ${absolute} does not exist; nothing was written`);
  if (!statSync(absolute).isDirectory())
    throw new PrescriptionError(`${what} ${absolute} is not a folder; nothing was written`);
  return realpathSync(absolute);
}

export function prescribe(opts: PrescribeOptions): Prescription {
  const layer = parseLayer(opts.layer);
  // pi resolves a relative package source against the settings file's folder, under the cwd the OS
  // gives it (symlink-free): the target is taken by its real path so the relative source is the one pi
  // will follow. The factory keeps the path it was given (a symlinked factory stays reachable through it).
  const into = realFolder(opts.into, 'target repository');
  const factory = path.resolve(opts.factoryRoot);
  if (!existsSync(path.join(factory, '.pi', 'extensions'))) {
    throw new PrescriptionError(`${factory} is not a factory folder (no .pi/extensions); nothing was written`);
  }
  if (!gitWorkTreeOf(into))
    throw new PrescriptionError(`target ${into} is not inside a git repository; nothing was written`);
  const realFactory = realpathSync(factory);
  // The same work tree is the factory's own checkout — unless the factory is installed in the target's
  // node_modules (a dev dependency), which is a repo of the user's like any other.
  const installedInTarget = realFactory.split(path.sep).includes('node_modules');
  if (realFactory === into || (!installedInTarget && gitWorkTreeOf(into) === gitWorkTreeOf(realFactory))) {
    throw new PrescriptionError(
      `target ${into} is the factory itself: pi already finds its node there; nothing was written`,
    );
  }
  try {
    const result = layer === 'node' ? installNode(into, factory) : installStation(into, factory);
    return { layer, ...result };
  } catch (error) {
    // installNode/installStation refuse (invalid JSON, "packages" not a list) before writing anything.
    throw new PrescriptionError(firstLine(errorMessage(error)));
  }
}

/** The one line the command prints once the entry is written. */
export function describePrescription(result: Prescription): string {
  const source = typeof result.entry === 'string' ? result.entry : result.entry.source;
  const what = result.layer === 'node' ? 'node (socle extensions only)' : 'station (whole package)';
  const how = result.replaced ? 'replaced the entry with the same source' : 'added';
  const rules = result.rulesCopied ? '; default damage-control rules copied' : '';
  // An absolute source is an install on this machine (a global prefix): a teammate's pi would skip it, so it is
  // not to be committed; the cockpit itself needs no entry (it gives pi the node at each start).
  if (path.isAbsolute(source)) {
    return `${what} prescribed in ${result.settingsFile}: ${how}, source ${source}${rules} — a path on this machine: keep it out of commits (a teammate's pi skips it; \`factory\` itself needs no entry, it gives pi the node at each start), or install the cockpit in the repo (npm i -D) and prescribe again for an entry every clone resolves`;
  }
  // What the user does next is the cockpit's workflow, not pi's: commit the node, then check it from that repo.
  return `${what} prescribed in ${result.settingsFile}: ${how}, source ${source}${rules} — commit .pi/ there, then run \`factory doctor\` in it (\`factory init\` also writes a roster and briefs)`;
}
