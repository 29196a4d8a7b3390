// The routes pi offered, remembered between commands. `factory prompt --model` (and bon's `--models`) checks its
// routes against `pi --list-models` before the turn, and that listing is a whole pi start the turn would wait on —
// most of what the factory added around one pi turn. A remembered listing only ever says yes: a route it lacks is
// listed again, fresh, before anything is refused. It is keyed by all that decides what pi lists: the pi program
// (its files' size and time), pi's agent folder (models, auth, settings), the project's pi settings and the
// environment pi sees (hashed: no value is written), and it is forgotten after a day.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { childEnv } from '../config/env.js';
import { piAgentDir, workspacePaths } from '../config/paths.js';
import type { PiCommand } from '../pi/piCommand.js';
import type { ProbeSite } from './probes.js';

const DAY_MS = 24 * 3600_000;
/** Variables a shell changes from one command to the next that pi's listing does not depend on. */
const VOLATILE = new Set(['PWD', 'OLDPWD', 'SHLVL', '_', 'COLUMNS', 'LINES', 'TERM_SESSION_ID', 'WINDOWID']);

/** Size and time of a file (or that it is not there): what changes when it is written. */
function stamp(file: string): string {
  try {
    const s = fs.statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return '-';
  }
}

/** The key of one listing: what pi would list is the same as long as this is. */
export function listingKey(pi: PiCommand, root: string, env: Record<string, string | undefined>): string {
  const agent = piAgentDir(env);
  const program = [pi.command, ...pi.prefixArgs];
  const files = [
    ...program.filter((p) => path.isAbsolute(p)),
    ...['models.json', 'auth.json', 'settings.json'].map((f) => path.join(agent, f)),
    path.join(root, '.pi', 'settings.json'),
  ];
  const vars = Object.keys(env)
    .filter((k) => !VOLATILE.has(k) && env[k] !== undefined)
    .sort()
    .map((k) => [k, env[k]]);
  return createHash('sha256')
    .update(JSON.stringify({ program, files: files.map((f) => [f, stamp(f)]), vars }))
    .digest('hex');
}

interface Remembered {
  key: string;
  at: number;
  routes: string[];
}

/** The routes remembered under `key`, when they are a day old at most. */
export function rememberedRoutes(file: string, key: string, now = Date.now()): Set<string> | undefined {
  try {
    const held = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Remembered>;
    if (
      held.key !== key ||
      typeof held.at !== 'number' ||
      now - held.at > DAY_MS ||
      now < held.at ||
      !Array.isArray(held.routes)
    )
      return undefined;
    return new Set(held.routes.filter((r): r is string => typeof r === 'string'));
  } catch {
    return undefined;
  }
}

/** Remembers a fresh listing (written whole, then renamed: a reader never sees half of it). Best effort. */
export function rememberRoutes(file: string, key: string, routes: ReadonlySet<string>, now = Date.now()): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(
      temporary,
      `${JSON.stringify({ key, at: now, routes: [...routes].sort() } satisfies Remembered)}\n`,
    );
    fs.renameSync(temporary, file);
  } catch {
    // a read-only data folder: the next command lists again
  }
}

/**
 * A run's model routes (`--model`, `--models`) checked against what pi offers now, before any token: pi bills an
 * unknown `--model` as a synthetic clone of the provider's default, and an arm on it fails after the primer was
 * paid. A provider none of whose models is listed is told as the key it needs. Throws a UsageError (exit 2).
 */
export async function assertModelsOffered(
  site: ProbeSite,
  routes: readonly string[],
  flag: '--model' | '--models',
): Promise<void> {
  if (routes.length === 0) return;
  // What pi listed last time, under the same pi, agent folder and environment, answers a yes without starting pi.
  const pi = site.pi instanceof Error ? undefined : site.pi;
  const key = pi ? listingKey(pi, site.root, childEnv({ real: site.env, dotenv: site.dotenv })) : undefined;
  const file = path.join(workspacePaths(site.root).dataDir, 'cache', 'pi-routes.json');
  const held = key !== undefined ? rememberedRoutes(file, key) : undefined;
  if (held && routes.every((route) => held.has(route))) return;
  // Only now the doctor's probes (pi's start, and the text measures its motifs need).
  const [{ UsageError }, { listModels }] = await Promise.all([import('../contract/errors.js'), import('./probes.js')]);
  const listing = await listModels(site);
  if ('error' in listing) throw new UsageError(`${flag} could not be checked: ${listing.error}`);
  if (key !== undefined) rememberRoutes(file, key, listing.routes);
  const unknown = routes.filter((m) => !listing.routes.has(m));
  // pi lists only the providers it has a key for: a provider with other models listed has its key, the model itself
  // is what pi does not offer.
  const { missingKeyMotif } = await import('../pi/providerKeys.js');
  const listedProviders = new Set([...listing.routes].map((r) => r.split('/')[0]));
  const keyless = unknown.map((m) => m.split('/')[0]!).find((p) => !listedProviders.has(p));
  if (keyless) throw new UsageError(missingKeyMotif(keyless));
  if (unknown.length > 0)
    throw new UsageError(`${flag}: pi does not offer ${[...new Set(unknown)].join(', ')} (see pi --list-models)`);
}
