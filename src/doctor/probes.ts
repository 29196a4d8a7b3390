// The doctor's probes: each spawns or reads REAL state at the moment it is asked (never a recorded result).
// Probes shared by several checks (pi --version, pi --list-models) are memoised per doctor run only, through
// `shared(ctx, key, fn)`: runDoctor gives every run a fresh context object, so nothing outlives a run.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { childEnv } from '../config/env.js';
import { runToEnd } from '../process/run.js';
import { checkPi, type PiCommand } from '../pi/resolve.js';
import { lastLine } from '../contract/text.js';
import type { DoctorContext } from './types.js';

/** What a probe needs of its context: a DoctorContext is one, and so is a command's workspace and its pi. */
export type ProbeSite = Pick<DoctorContext, 'root' | 'env' | 'dotenv' | 'pi' | 'probeTimeoutMs'>;

const DEFAULT_PROBE_TIMEOUT_MS = 20_000;
const OUTPUT_CAP = 1024 * 1024;

interface ProbeOutcome {
  /** Exit code; null when killed by a signal or never started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The program could not be started (ENOENT, EACCES …). */
  spawnError?: string;
}

/**
 * A probe's program run to its end in the workspace, with the env pi gets, ended on the probe timeout. Its stdout
 * goes through a file: pi ends `--list-models` with process.exit(), which can cut a long listing short on a
 * pipe — and a model missing from the list is a failed check.
 */
async function runProbe(ctx: ProbeSite, command: string, args: string[]): Promise<ProbeOutcome> {
  const out = await runToEnd(command, args, {
    cwd: ctx.root,
    env: piProbeEnv(ctx),
    timeoutMs: probeTimeout(ctx),
    killGraceMs: 500,
    drainMs: 2000,
    stdoutToFile: true,
    maxOutputBytes: OUTPUT_CAP,
  });
  const spawnError = out.spawnError && (out.spawnError.code ?? out.spawnError.message);
  return {
    code: out.code,
    stdout: out.stdout.toString('utf8'),
    stderr: out.stderr.toString('utf8'),
    timedOut: out.timedOut,
    spawnError,
  };
}

/** Per-run memo of a shared probe (see the header). */
const memo = new WeakMap<ProbeSite, Map<string, Promise<unknown>>>();
export function shared<T>(ctx: ProbeSite, key: string, fn: () => Promise<T>): Promise<T> {
  let table = memo.get(ctx);
  if (!table) memo.set(ctx, (table = new Map()));
  let pending = table.get(key) as Promise<T> | undefined;
  if (!pending) table.set(key, (pending = fn()));
  return pending;
}

function probeTimeout(ctx: ProbeSite): number {
  return ctx.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
}

/** The environment pi gets when no auth profile closes the vault: what `--list-models` should see. */
function piProbeEnv(ctx: ProbeSite): Record<string, string> {
  return childEnv({ real: ctx.env, dotenv: ctx.dotenv });
}

/** `pi --version` of the resolved pi, once per run. */
export function piVersion(ctx: DoctorContext): Promise<{ version: string } | { error: string }> {
  return shared(ctx, 'pi-version', async () => {
    if (ctx.pi instanceof Error) return { error: ctx.pi.message };
    try {
      return await checkPi(ctx.pi, { env: piProbeEnv(ctx), timeoutMs: probeTimeout(ctx) });
    } catch (error) {
      return { error: (error as Error).message };
    }
  });
}

/** One model pi offers: `provider/model` as `--model` takes it. */
export interface ListedModel {
  provider: string;
  model: string;
}

/**
 * Parses pi's `--list-models` table (header `provider  model  context …`, space-padded columns, trailing
 * blanks). Lines before the header (warnings) are ignored; "No models …" gives an empty list.
 */
export function parseModelList(text: string): ListedModel[] {
  const lines = text.split(/\r?\n/);
  const header = lines.findIndex((line) => /^\s*provider\s+model\b/.test(line));
  if (header < 0) return [];
  const models: ListedModel[] = [];
  for (const line of lines.slice(header + 1)) {
    const [provider, model] = line.trim().split(/\s+/);
    if (provider && model) models.push({ provider, model });
  }
  return models;
}

export type ModelListing = { routes: Set<string>; count: number } | { error: string };

/** `pi --list-models`, once per run: the routes pi accepts right now with the keys it can see. */
export function listModels(ctx: ProbeSite): Promise<ModelListing> {
  return shared(ctx, 'pi-list-models', async () => {
    if (ctx.pi instanceof Error) return { error: ctx.pi.message };
    const pi: PiCommand = ctx.pi;
    const out = await runProbe(ctx, pi.command, [...pi.prefixArgs, '--list-models']);
    if (out.spawnError) return { error: `pi could not start (${out.spawnError}): ${pi.display}` };
    if (out.timedOut)
      return { error: `pi --list-models gave no answer within ${Math.round(probeTimeout(ctx) / 1000)} s` };
    if (out.code !== 0)
      return {
        error: `pi --list-models failed (exit ${out.code ?? 'signal'}): ${lastErrorLine(out.stderr || out.stdout)}`,
      };
    const models = parseModelList(out.stdout);
    return { routes: new Set(models.map((m) => `${m.provider}/${m.model}`)), count: models.length };
  });
}

/** `<program> --version` found on the allowed PATH: the first version-looking token of its answer. */
export async function toolVersion(
  ctx: DoctorContext,
  command: string,
): Promise<{ version: string } | { error: string; missing: boolean }> {
  const out = await runProbe(ctx, command, ['--version']);
  if (out.spawnError)
    return { error: `${command} not found (${out.spawnError})`, missing: out.spawnError === 'ENOENT' };
  if (out.timedOut) return { error: `${command} --version gave no answer`, missing: false };
  if (out.code !== 0)
    return {
      error: `${command} --version failed (exit ${out.code ?? 'signal'}): ${lastErrorLine(out.stderr || out.stdout)}`,
      missing: false,
    };
  const version = /\d+\.\d+(?:\.\d+)?/.exec(out.stdout)?.[0];
  return version ? { version } : { error: `${command} --version printed no version`, missing: false };
}

/** First 12 hex of the sha256 of a file's bytes: enough to tell two copies of an extension apart. */
export function shortHash(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);
}

/** The pi SDK the factory ships with: `node_modules/@earendil-works/pi-coding-agent` here or in an ancestor. */
export function sdkManifest(factoryRoot: string): { file: string; version?: string } | undefined {
  let dir = factoryRoot;
  for (;;) {
    const file = path.join(dir, 'node_modules', '@earendil-works', 'pi-coding-agent', 'package.json');
    if (existsSync(file)) {
      try {
        const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
        return { file, version: typeof version === 'string' ? version : undefined };
      } catch {
        return { file };
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The last line of an error output, short enough for a check's detail. */
function lastErrorLine(text: string): string {
  return lastLine(text, 160, { ellipsis: '...' });
}
