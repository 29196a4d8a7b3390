// The roster (`adws/adw_config/factory.config.yaml`): which model does what, with which tools, budget and keys.
// Start-up matters: `yaml` (~20 ms, via rosterYaml.ts) and `zod` (~50 ms, via rosterSchema.ts) are imported only
// when a roster file is actually read, so a repository without one never loads either.
// Role names are user-chosen keys: every map here is a null-prototype object and every lookup is own-only, so
// `agents.constructor` is undefined unless a roster defines it (and rosterYaml.ts refuses to let one).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { parseDuration } from '../contract/duration.js';
import path from 'node:path';
import { UsageError, errorMessage, firstLine } from '../contract/errors.js';
import type { GateCommand } from '../gates/judges.js';
import type { Limits } from '../contract/agent.js';
import { route } from './routes.js';
import type { RawRoster } from './rosterSchema.js';
import { KNOWN_TOOLS, MAX_ROSTER_BYTES, ROLE_PATTERN, type ThinkingLevel, type ToolName } from './rosterVocabulary.js';
import { quote, UNSAFE_CHARS } from '../contract/zodIssues.js';

export const ROSTER_FILE = path.join('adws', 'adw_config', 'factory.config.yaml');
export const BRIEFS_DIR = path.join('adws', 'adw_config', 'briefs');

/** The roles the workflows run: prompt → prompter; build and every best-of-N arm → builder. */
export const WORKFLOW_ROLES = ['builder', 'prompter'] as const;

export type HarnessName = 'pi' | 'claude';

const DEFAULT_COMMAND_TIMEOUT_SECONDS = 600;
const DEFAULT_AGENT_TIMEOUT_SECONDS = 600;
const READ_ONLY_TOOLS: ToolName[] = ['read', 'grep', 'find', 'ls', 'bash'];

/** What a role gets when the roster says nothing about it: the prompter explores, the builder edits, the judge reads. */
const ROLE_DEFAULTS: Record<string, { tools: ToolName[]; timeoutSeconds: number }> = Object.assign(
  Object.create(null),
  {
    prompter: { tools: READ_ONLY_TOOLS, timeoutSeconds: 600 },
    builder: { tools: [...KNOWN_TOOLS], timeoutSeconds: 1800 },
    // A best-of-N judge compares patches it is handed: it reads, it runs nothing.
    judge: { tools: ['read', 'grep', 'find', 'ls'], timeoutSeconds: 600 },
  },
);

export interface PayloadCommand {
  run: string;
  timeoutSeconds: number;
}

/** A role as written in the roster (every field optional); `agentFor` fills the defaults. */
export interface AgentConfig {
  model?: string;
  thinking?: ThinkingLevel;
  tools?: ToolName[];
  timeoutSeconds?: number;
  limits?: Limits;
  /** Present = an auth profile: the vault closes and the node gets only these keys. */
  auth?: { keys: string[]; direct: boolean };
  /** Paths the role may write (told to the agent by factory-context); the work tree when absent. */
  writable?: string[];
}

export interface Roster {
  /** The file it was read from; undefined for the built-in defaults. */
  file?: string;
  /** Gateway provider prefixed to registry ids (`openrouter`); '' = ids are pi routes already. */
  gateway: string;
  harness: HarnessName;
  /** The pi executable (path or name), like FACTORY_PI. */
  pi?: string;
  /** Registry id of the provider-outage fallback. */
  fallbackModel?: string;
  /** Payload gates: commands run in `dir` (relative to the workspace root). */
  payload: { dir: string; commands: PayloadCommand[]; setup?: PayloadCommand };
  /** factory-context's pruning of old, big tool results (for the model call only). */
  context: { pruneTurns?: number; pruneKb?: number };
  /** Best-of-N spend caps and race policies (dollars, milliseconds): the defaults the flags override. */
  bon?: {
    maxCost?: number;
    armMaxCost?: number;
    confirmAbove?: number;
    stopAfterGreen?: number;
    deadlineMs?: number;
    judge?: boolean;
  };
  agents: Record<string, AgentConfig>;
}

/** An agent ready for `agentPhase`: defaults filled, the model routed. */
export interface AgentProfile {
  role: string;
  /** Registry id as written (or as given by `--model`); undefined = pi's default model. */
  model?: string;
  /** What pi receives in `--model`. */
  route?: string;
  direct: boolean;
  thinking?: ThinkingLevel;
  tools: ToolName[];
  timeoutMs: number;
  limits: Limits;
  /** Undefined = no profile: the `.env` vault stays open. `{keys: []}` = closed, nothing put back. */
  auth?: { keys: string[] };
  writable?: string[];
}

/** An invalid or unreadable roster: one line, `<file>: <path>: <reason>`; the CLI exits 2 before any call. */
export class RosterError extends UsageError {}

export function rosterPath(root: string, override?: string): string {
  return override ? path.resolve(override) : path.join(root, ROSTER_FILE);
}

/** What applies when a repository has no roster: no gateway (ids are pi routes), pi, no payload gate. */
export function defaultRoster(): Roster {
  return { gateway: '', harness: 'pi', payload: { dir: '.', commands: [] }, context: {}, agents: Object.create(null) };
}

/** A role as the roster wrote it, or undefined: own entries only, whatever the map's prototype. */
export function roleConfig(roster: Roster, role: string): AgentConfig | undefined {
  return Object.hasOwn(roster.agents, role) ? roster.agents[role] : undefined;
}

/** The file as a motif names it: quoted when its path holds a character that would break the line. */
function named(abs: string): string {
  return UNSAFE_CHARS.test(abs) ? quote(abs) : abs;
}

/** Reads, parses and validates a roster file. Throws RosterError (one line) on any problem. */
export async function loadRoster(file: string): Promise<Roster> {
  const abs = path.resolve(file);
  return (await rosterParser())(abs, readRosterText(abs));
}

/** The file's text, read no further than the size bound: `--config` may name a device or a huge log. */
function readRosterText(abs: string): string {
  const chunks: Buffer[] = [];
  let total = 0;
  let fd: number | undefined;
  try {
    fd = fs.openSync(abs, 'r');
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > MAX_ROSTER_BYTES)
        throw new RosterError(
          `${named(abs)}: larger than ${MAX_ROSTER_BYTES / 1024} KB, which no roster needs: is this the roster file?`,
        );
    }
  } catch (error) {
    if (error instanceof RosterError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new RosterError(
      code === 'ENOENT'
        ? `roster not found: ${named(abs)}`
        : `${named(abs)}: unreadable (${code ?? firstLine(errorMessage(error))})`,
    );
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Validated rosters are remembered under `adws/adw_data/cache/` by a hash of the file, its path and the build
 * of the validator: the next command skips yaml and zod (~70 ms before the first pi spawn). Any edit of the
 * roster or rebuild of the factory misses the cache; an invalid roster is never cached.
 */
function rosterCacheKey(abs: string, text: string): string {
  let build = '';
  try {
    // The validator is the YAML reader (bounds, key checks), the schema, the role check and the roster's words they check against.
    build = ['./rosterYaml.js', './rosterSchema.js', './rosterRoles.js', './rosterVocabulary.js']
      .map((f) => fs.statSync(new URL(f, import.meta.url)).mtimeMs)
      .join(':');
  } catch {
    build = 'source'; // running from src/ (tests): the key still covers path and text
  }
  return createHash('sha256').update(`${build}\0${abs}\0${text}`).digest('hex');
}

async function loadRosterCached(abs: string, cacheFile: string): Promise<Roster> {
  const text = readRosterText(abs);
  const key = rosterCacheKey(abs, text);
  try {
    const cached = JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as { key?: string; roster?: Roster };
    // JSON.parse builds ordinary objects: the agents map gets its null prototype back.
    if (cached.key === key && cached.roster)
      return { ...cached.roster, agents: Object.assign(Object.create(null), cached.roster.agents) };
  } catch {
    // no cache yet, or an unreadable one: validate
  }
  const roster = (await rosterParser())(abs, text);
  try {
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ key, roster }));
    fs.renameSync(tmp, cacheFile);
  } catch {
    // a cache that cannot be written only costs the next command the validation
  }
  return roster;
}

/**
 * The roster parser, once yaml and zod are loaded: `(file, text)` → a Roster, or a RosterError of one line (never
 * a raw TypeError or RangeError). Synchronous, so that the fuzz suite drives thousands of texts in little time.
 */
export async function rosterParser(): Promise<(abs: string, text: string) => Roster> {
  const [{ readRosterYaml }, { validateRoster }, { unknownRoleMotif }] = await Promise.all([
    import('./rosterYaml.js'),
    import('./rosterSchema.js'),
    import('./rosterRoles.js'),
  ]);
  return (abs, text) => {
    const read = readRosterYaml(text);
    if (!read.ok) throw new RosterError(`${named(abs)}: ${read.motif}`);
    const checked = validateRoster(read.data ?? Object.create(null)); // an empty file is an empty roster: the defaults apply
    if (!checked.ok) throw new RosterError(`${named(abs)}: ${checked.motif}`);
    const unknownRole = unknownRoleMotif(Object.keys(checked.roster.agents ?? {}), named(abs));
    if (unknownRole) throw new RosterError(unknownRole);
    return toRoster(abs, checked.roster);
  };
}

function toRoster(abs: string, raw: RawRoster): Roster {
  const agents: Record<string, AgentConfig> = Object.create(null);
  for (const [role, a] of Object.entries(raw.agents ?? {})) {
    const limits: Limits = {};
    if (a.limits?.max_turns !== undefined) limits.maxTurns = a.limits.max_turns;
    if (a.limits?.max_tool_calls !== undefined) limits.maxToolCalls = a.limits.max_tool_calls;
    if (a.limits?.max_cost_usd !== undefined) limits.maxCostUsd = a.limits.max_cost_usd;
    agents[role] = {
      model: a.model,
      thinking: a.thinking,
      tools: a.tools ? [...new Set(a.tools)] : undefined,
      timeoutSeconds: a.timeout,
      limits: a.limits ? limits : undefined,
      auth: a.auth ? { keys: [...new Set(a.auth.keys ?? [])], direct: a.auth.direct ?? false } : undefined,
      writable: a.writable ? [...a.writable] : undefined,
    };
  }
  return {
    file: abs,
    gateway: raw.gateway ?? '',
    harness: raw.harness ?? 'pi',
    pi: raw.pi?.trim(),
    fallbackModel: raw.fallback_model,
    payload: {
      dir: raw.payload?.dir ?? '.',
      commands: (raw.payload?.commands ?? []).map((c) => ({
        run: c.run,
        timeoutSeconds: c.timeout ?? DEFAULT_COMMAND_TIMEOUT_SECONDS,
      })),
      ...(raw.payload?.setup
        ? {
            setup: {
              run: raw.payload.setup.run,
              timeoutSeconds: raw.payload.setup.timeout ?? DEFAULT_COMMAND_TIMEOUT_SECONDS,
            },
          }
        : {}),
    },
    context: { pruneTurns: raw.context?.prune_turns, pruneKb: raw.context?.prune_kb },
    ...(raw.bon
      ? {
          bon: {
            maxCost: raw.bon.max_cost,
            armMaxCost: raw.bon.arm_max_cost,
            confirmAbove: raw.bon.confirm_above,
            stopAfterGreen: raw.bon.stop_after_green,
            deadlineMs: raw.bon.deadline === undefined ? undefined : parseDuration(raw.bon.deadline),
            judge: raw.bon.judge,
          },
        }
      : {}),
    agents,
  };
}

/**
 * The roster that applies to a workspace: `--config` (must exist), else the repository's roster file when
 * there is one, else the defaults — in which case neither yaml nor zod is ever imported.
 */
export async function loadRosterIfPresent(root: string, override?: string): Promise<Roster> {
  const file = rosterPath(root, override);
  if (!override && !fs.existsSync(file)) return defaultRoster();
  return loadRosterCached(file, path.join(root, 'adws', 'adw_data', 'cache', 'roster.json'));
}

/**
 * A role's profile with the defaults filled and its model routed through the gateway. `overrides.model`
 * (`--model` on the command line) replaces the roster's model and is routed the same way, with the role's
 * `direct` flag.
 */
export function agentFor(roster: Roster, role: string, overrides: { model?: string } = {}): AgentProfile {
  const written = roleConfig(roster, role) ?? {};
  const defaults = (Object.hasOwn(ROLE_DEFAULTS, role) ? ROLE_DEFAULTS[role] : undefined) ?? {
    tools: READ_ONLY_TOOLS,
    timeoutSeconds: DEFAULT_AGENT_TIMEOUT_SECONDS,
  };
  const direct = written.auth?.direct ?? false;
  const model = overrides.model ?? written.model;
  return {
    role,
    model,
    route: model === undefined ? undefined : route(model, { gateway: roster.gateway, direct }),
    direct,
    thinking: written.thinking,
    tools: [...(written.tools ?? defaults.tools)],
    timeoutMs: (written.timeoutSeconds ?? defaults.timeoutSeconds) * 1000,
    limits: { ...written.limits },
    auth: written.auth ? { keys: [...written.auth.keys] } : undefined,
    writable: written.writable ? [...written.writable] : undefined,
  };
}

/** The fallback model's pi route (through the gateway), if the roster names one. */
export function fallbackRoute(roster: Roster): string | undefined {
  return roster.fallbackModel === undefined ? undefined : route(roster.fallbackModel, { gateway: roster.gateway });
}

/**
 * The fallback a run uses: the roster's `fallback_model`, else FACTORY_FALLBACK_MODEL of the real environment, else
 * of `.env` (where the reference keeps it, beside the key) — for every agent, a closed vault included — routed
 * through the roster's gateway like every model id.
 */
export function effectiveFallback(
  roster: Roster,
  real: NodeJS.ProcessEnv,
  dotenvValues: Readonly<Record<string, string>>,
): string | undefined {
  const fromRoster = fallbackRoute(roster);
  if (fromRoster) return fromRoster;
  const value =
    real.FACTORY_FALLBACK_MODEL ??
    (Object.hasOwn(dotenvValues, 'FACTORY_FALLBACK_MODEL') ? dotenvValues.FACTORY_FALLBACK_MODEL : undefined);
  return value && value.trim() ? route(value.trim(), { gateway: roster.gateway }) : undefined;
}

/** Absolute folder the payload commands run in. */
export function payloadDir(root: string, roster: Roster): string {
  return path.resolve(root, roster.payload.dir);
}

/** The payload commands as the gates run them (`bash -c` in the payload folder, with their timeouts). */
export function gateCommands(root: string, roster: Roster): GateCommand[] {
  const cwd = payloadDir(root, roster);
  return roster.payload.commands.map((c) => ({ run: c.run, cwd, timeoutMs: c.timeoutSeconds * 1000 }));
}

/** The command each best-of-N worktree runs before its arm (`payload.setup`), in the payload folder, or undefined. */
export function setupCommand(root: string, roster: Roster): GateCommand | undefined {
  const setup = roster.payload.setup;
  return setup ? { run: setup.run, cwd: payloadDir(root, roster), timeoutMs: setup.timeoutSeconds * 1000 } : undefined;
}

/** Where the cockpit's neutral briefs live (the fallback of a repository that has none, and what init copies). */
const DEFAULT_BRIEFS_DIR = path.join('templates', 'briefs');

export interface BriefSource {
  file: string;
  /** The repository's own brief, or the factory's neutral default. */
  origin: 'repo' | 'default';
  text: string;
}

/**
 * A role's brief: the workspace's `adws/adw_config/briefs/<role>.md`, else the neutral default shipped in
 * `factoryRoot`'s templates (never the factory's own house rules, which are written for its own code).
 * Undefined when there is none or it is blank. factory-context in the node resolves the same two places.
 */
export function briefSource(
  root: string,
  role: string,
  factoryRoot?: string,
  opts: { defaultOnly?: boolean } = {},
): BriefSource | undefined {
  if (!ROLE_PATTERN.test(role)) return undefined; // a role never walks out of the briefs folder
  const places: Array<[string, BriefSource['origin']]> = opts.defaultOnly
    ? []
    : [[path.join(root, BRIEFS_DIR, `${role}.md`), 'repo']];
  if (factoryRoot) places.push([path.join(factoryRoot, DEFAULT_BRIEFS_DIR, `${role}.md`), 'default']);
  for (const [file, origin] of places) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (text.trim() !== '') return { file, origin, text: text.trim() };
  }
  return undefined;
}

export function briefFor(root: string, role: string, factoryRoot?: string): string | undefined {
  return briefSource(root, role, factoryRoot)?.text;
}
