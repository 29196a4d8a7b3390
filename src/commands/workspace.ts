// Everything a command needs to know about the workspace it runs in, loaded once: where the data lives, the
// roster, `.env`, the redactor, and the agent harness. Bad input here is a UsageError (exit 2, one line) and
// nothing has been written yet.
import fs from 'node:fs';
import path from 'node:path';
import { childEnv, loadDotEnv, secretEntries, type DotEnv } from '../config/env.js';
import { NODE_ENV } from '../../.pi/lib/contract.js';
import { UsageError } from '../contract/errors.js';
import { createPiHarness } from '../harness/pi.js';
import type { Harness } from '../harness/types.js';
import { resolveWorkspaceRoot, workspacePaths, type WorkspacePaths } from '../config/paths.js';
import { readProjectSettings } from '../pi/node.js';
import { factoryRoot, PiUnavailableError, resolvePi, type PiCommand } from '../pi/resolve.js';
import { createRedactor, type Redactor } from '../contract/redact.js';
import {
  agentFor,
  briefFor,
  defaultRoster,
  RosterError,
  effectiveFallback,
  loadRosterIfPresent,
  roleConfig,
  type AgentProfile,
  type Roster,
} from '../config/roster.js';
import { routeModelFlag } from '../config/routes.js';

export interface CommandFlags {
  model?: string;
  harness?: string;
  retries: number;
  cwd?: string;
  dir?: string;
  config?: string;
  ui: boolean;
  json: boolean;
  /** bon: number of arms, models per arm (comma-separated), apply the verified winner. */
  arms?: number;
  models?: string;
  apply?: boolean;
  /** apply: a red arm, named, applied knowingly. */
  force?: boolean;
  /** bon: fan out above the forecast's threshold; apply and bon --apply: an arm that tried something, applied. */
  yes?: boolean;
  /** doctor: skip the slow checks, fail on warnings, the prescription's layer and target. */
  quick?: boolean;
  strict?: boolean;
  layer?: string;
  into?: string;
  /** A screen's bell and desktop notification (`--no-notify` turns them off). */
  notify?: boolean;
  /** `--report md,junit` and where the files go. */
  report?: string;
  'report-dir'?: string;
  /** clean: the age a run must have, the newest runs kept, say without removing. */
  'older-than'?: string;
  keep?: number;
  'dry-run'?: boolean;
}

export const HARNESSES = ['pi', 'claude'];

export interface Workspace {
  root: string;
  /** The folder the command was started in (`--cwd` or the shell's): paths the user typed are relative to it. */
  invokedIn: string;
  paths: WorkspacePaths;
  roster: Roster;
  /** `--config` as the run was started with it (absolute), or undefined for the repository's own roster. */
  rosterFile?: string;
  dotenv: DotEnv;
  /** The cockpit's own environment (the real one, or the demo's). */
  real: NodeJS.ProcessEnv;
  /** Masks every secret value (from `.env` and secret-looking variables) in what the factory shows or writes. */
  redact: Redactor;
  harnessName: 'pi' | 'claude';
}

/** An agent role as a phase needs it: the routed profile, its environment (the vault rule), its brief. */
export interface AgentSetup {
  profile: AgentProfile;
  env: Record<string, string>;
  brief?: string;
  fallbackModel?: string;
}

function existingDir(dir: string, what: string): string {
  const abs = path.resolve(dir);
  let stat;
  try {
    stat = fs.statSync(abs);
  } catch {
    throw new UsageError(`${what} does not exist: ${abs}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`${what} is not a folder: ${abs}`);
  return abs;
}

/** Refuse early (before any write) when the runtime data folders could not be written. */
export function assertWritable(dir: string, what: string): void {
  let probe = path.resolve(dir);
  while (!fs.existsSync(probe)) {
    const parent = path.dirname(probe);
    if (parent === probe) break;
    probe = parent;
  }
  try {
    fs.accessSync(probe, fs.constants.W_OK);
    if (!fs.statSync(probe).isDirectory()) throw new Error('not a folder');
  } catch {
    throw new UsageError(`${what} is not writable: ${dir} (check ${probe})`);
  }
}

export function parseRetries(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 10)
    throw new UsageError(`--retries must be an integer from 0 to 10 (got ${value})`);
  return value;
}

/**
 * `rosterOptional`: the command reads only the run store and the data folder (clean, runs, show), so a roster that
 * does not load (an unknown role, a typo) must not stop it: it goes on with the default roster and says so once.
 */
export async function openWorkspace(
  flags: CommandFlags,
  extra: { cwd?: string; env?: NodeJS.ProcessEnv; rosterOptional?: boolean } = {},
): Promise<Workspace> {
  const harnessFlag = flags.harness;
  if (harnessFlag !== undefined && !HARNESSES.includes(harnessFlag)) {
    throw new UsageError(`unknown harness ${JSON.stringify(harnessFlag)} (available: ${HARNESSES.join(', ')})`);
  }
  parseRetries(flags.retries);
  const cwd = existingDir(extra.cwd ?? flags.cwd ?? process.cwd(), '--cwd');
  const root = await resolveWorkspaceRoot(cwd);
  const paths = workspacePaths(root);
  // --config is read from where the shell is (as rosterPath does), and kept: every screen of the run reads the same one.
  const rosterFile = flags.config === undefined ? undefined : path.resolve(flags.config);
  const roster = await loadRosterIfPresent(root, rosterFile).catch((error: unknown) => {
    if (!extra.rosterOptional || !(error instanceof RosterError)) throw error;
    process.stderr.write(`factory: ${error.message} — not needed here, going on without it\n`);
    return defaultRoster();
  });
  assertWritable(paths.sessionsDir, 'session folder');
  assertWritable(paths.schemasDir, 'schema folder');
  const real = extra.env ?? process.env;
  const dotenv = loadDotEnv(root, real);
  for (const warning of dotenv.warnings) process.stderr.write(`factory: ${warning}\n`);
  const profiles = Object.keys(roster.agents)
    .map((role) => agentFor(roster, role).auth)
    .filter((a) => a !== undefined);
  const secrets = secretEntries(
    real,
    dotenv,
    profiles.length > 0 ? { keys: profiles.flatMap((p) => p.keys) } : undefined,
  );
  return {
    root,
    invokedIn: cwd,
    paths,
    roster,
    ...(rosterFile ? { rosterFile } : {}),
    dotenv,
    real,
    redact: createRedactor(secrets),
    harnessName: (harnessFlag ?? roster.harness) as 'pi' | 'claude',
  };
}

/**
 * A spec path as the user typed it (relative to where they are, e.g. `../specs/x.md` from `src/`) made relative to
 * the repository root, where the workflows read it. A path that does not exist from there is kept as typed: the
 * check phase then says where it looked.
 */
export function specFromInvocation(ws: Pick<Workspace, 'root' | 'invokedIn'>, spec: string): string {
  if (path.isAbsolute(spec) || ws.invokedIn === ws.root) return spec;
  const typed = path.resolve(ws.invokedIn, spec);
  const rel = path.relative(ws.root, typed);
  if (!fs.existsSync(typed) || rel.startsWith('..') || path.isAbsolute(rel)) return spec;
  return rel;
}

/**
 * A project's `.pi/settings.json` pi cannot read: pi would skip it and run on without it, silently — so a run
 * (prompt, build, bon) refuses it before any token, as the doctor's node.settings row says.
 */
export function assertProjectSettings(ws: Pick<Workspace, 'root' | 'harnessName'>): void {
  if (ws.harnessName !== 'pi') return;
  const { problem } = readProjectSettings(path.join(ws.root, '.pi', 'settings.json'));
  if (problem !== undefined)
    throw new UsageError(
      `${problem}: pi would skip it and run without the project's settings — correct it (factory doctor node.settings)`,
    );
}

export function agentSetup(ws: Workspace, role: string, flags: CommandFlags): AgentSetup {
  assertProjectSettings(ws);
  const written = roleConfig(ws.roster, role);
  let model: string | undefined;
  if (flags.model !== undefined) {
    const routed = routeModelFlag(flags.model, { gateway: ws.roster.gateway, direct: written?.auth?.direct ?? false });
    if ('motif' in routed) throw new UsageError(routed.motif);
    model = flags.model.trim();
  }
  const profile = agentFor(ws.roster, role, { model });
  const env = childEnv({ real: ws.real, dotenv: ws.dotenv, profile: profile.auth, extra: contextEnv(ws, profile) });
  return {
    profile,
    env,
    brief: briefFor(ws.root, role, factoryRoot()),
    // The roster's fallback, else FACTORY_FALLBACK_MODEL from the environment or .env (where the key sits), for every
    // agent (a closed vault does not hide it), routed through the gateway like every model id.
    fallbackModel: effectiveFallback(ws.roster, ws.real, ws.dotenv.values),
  };
}

/** The options every agent-phase ADW takes from a role's setup (model, tools, limits, env…). */
export async function agentPhaseOptions(ws: Workspace, setup: AgentSetup, retries: number) {
  return {
    harness: await harnessFor(ws),
    workspace: ws.paths,
    cwd: ws.root,
    retries,
    model: setup.profile.route,
    fallbackModel: setup.fallbackModel,
    thinking: setup.profile.thinking,
    tools: setup.profile.tools,
    limits: setup.profile.limits,
    timeoutMs: setup.profile.timeoutMs,
    env: setup.env,
  };
}

/** What factory-context reads in the node: the role's writable paths and the pruning settings of the roster. */
export function contextEnv(ws: Workspace, profile: AgentProfile): Record<string, string | undefined> {
  const { pruneTurns, pruneKb } = ws.roster.context;
  return {
    [NODE_ENV.writable]: profile.writable?.join(','),
    [NODE_ENV.pruneTurns]: pruneTurns === undefined ? undefined : String(pruneTurns),
    [NODE_ENV.pruneKb]: pruneKb === undefined ? undefined : String(pruneKb),
  };
}

/** Gate commands and git get the allowlist only: no provider key, ever. */
export function gateEnv(ws: Workspace): Record<string, string> {
  return childEnv({ real: ws.real, dotenv: ws.dotenv, profile: { keys: [] } });
}

export async function harnessFor(ws: Workspace): Promise<Harness> {
  if (ws.harnessName === 'claude') {
    const { createClaudeHarness } = await import('../harness/claude.js');
    return createClaudeHarness({});
  }
  const env = ws.roster.pi && !ws.real.FACTORY_PI ? { ...ws.real, FACTORY_PI: ws.roster.pi } : ws.real;
  try {
    return createPiHarness(await resolvePi({ env, factoryRoot: factoryRoot() }));
  } catch (error) {
    if (error instanceof PiUnavailableError) throw new UsageError(error.message);
    throw error;
  }
}

/** The pi a run in this workspace spawns (the roster's `pi` unless FACTORY_PI is set); none found is a usage error. */
export async function runPi(ws: Workspace): Promise<PiCommand> {
  const env = ws.roster.pi && !ws.real.FACTORY_PI ? { ...ws.real, FACTORY_PI: ws.roster.pi } : ws.real;
  try {
    return await resolvePi({ env, factoryRoot: factoryRoot() });
  } catch (error) {
    if (error instanceof PiUnavailableError) throw new UsageError(error.message);
    throw error;
  }
}

/** `--model` of prompt and build checked like bon's: on the pi the run will spawn, before any token (pi runs only). */
export async function assertModelFlagOffered(ws: Workspace, route: string | undefined): Promise<void> {
  if (route === undefined || ws.harnessName !== 'pi') return;
  const pi = await runPi(ws);
  const { assertModelsOffered } = await import('../doctor/offeredRoutes.js');
  await assertModelsOffered({ root: ws.root, env: ws.real, dotenv: ws.dotenv, pi }, [route], '--model');
}
