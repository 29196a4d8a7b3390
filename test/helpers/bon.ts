// Helpers for best-of-N end-to-end tests: the demo's sample payload (committed, the factory's pi node included,
// its roster naming `node --test` as the gate) in a temp folder, a rig (the real pi under test + scripted model), and
// `factory bon` prepared exactly as the command does it (openWorkspace → prepareBonRun → execute → close).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BonSession } from '../../src/bon/session.js';
import { prepareBonRun, type BonArgs, type PreparedBon } from '../../src/commands/bon.js';
import { openWorkspace, type CommandFlags } from '../../src/commands/workspace.js';
import { bonTapes, createDemoRepo, DEMO_MODELS } from '../../src/commands/demo.js';
import type { RunEvent } from '../../src/contract/events.js';
import { workspacePaths, type WorkspacePaths } from '../../src/config/paths.js';
import { execute } from '../../src/engine/runner.js';
import { call, type Tapes } from '../../src/scripted/tape.js';
import { FACTORY_BIN } from './cli.js';
import { until } from './processes.js';
import { git } from './repo.js';
import { startRig, type Rig, type RigOptions } from './rig.js';

export const SPEC = 'specs/farewell.md';

export interface BonBench {
  rig: Rig;
  /** The payload repo (realpath), everything committed. */
  dir: string;
  paths: WorkspacePaths;
  /** The environment `factory bon` gets: the process's own plus the rig's (private pi agent dir, FACTORY_PI = the pi under test). */
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

/**
 * Every request the scripted model served, one line each (order, tape and step, session, messages sent): what a
 * failing test prints, so a tape played out of turn (an extra request, a missing one) shows in CI's log.
 */
export function requestsLog(model: Pick<BonBench['rig']['model'], 'requests'>): string {
  return model.requests
    .map((r) => `${r.seq} ${r.tape}#${r.step} ${r.kind}${r.session ? ` ${r.session.slice(0, 8)}` : ''} m${r.messages}`)
    .join('\n');
}

/** `files`: more files for the payload (a project extension…), committed on top of the demo's; `models`: the rig's. */
export async function bonBench(
  tapes: Tapes,
  files: Record<string, string> = {},
  models?: RigOptions['models'],
): Promise<BonBench> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-bon-'));
  const dir = createDemoRepo(path.join(scratch, 'greet'));
  if (Object.keys(files).length > 0) {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'test files');
  }
  const rig = await startRig({ tapes, ...(models ? { models } : {}) });
  return {
    rig,
    dir,
    paths: workspacePaths(dir),
    env: { ...process.env, ...rig.env },
    cleanup: async () => {
      await rig.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export interface BonOutcome {
  exit: number;
  events: RunEvent[];
  session: BonSession;
  prepared: PreparedBon;
}

export interface BonRunOptions {
  arms?: number;
  models?: string[];
  /** Every event as it happens, with the live session (to abort or add an arm at the right moment). */
  onEvent?: (event: RunEvent, session: BonSession) => void;
  /** Called once prepared, before the run starts (to subscribe a trace store…). */
  onPrepared?: (prepared: PreparedBon) => void;
  /** The arms one after another in the payload's tree (`--in-place`); worktrees at once otherwise. */
  inPlace?: boolean;
  concurrency?: number;
  /** More of the command's arguments (caps, race policies: `maxCost`, `stopAfterGreen`, `deadlineMs`, `yes`). */
  args?: Partial<BonArgs>;
  /** The board watches (an arm at its cap pauses, a high forecast asks), as the TUI sets it. */
  watched?: boolean;
}

/** `factory bon specs/farewell.md` in the bench, headless: prepared by the command's own code, closed after. */
export async function runBon(bench: BonBench, opts: BonRunOptions = {}): Promise<BonOutcome> {
  const models = opts.models ?? DEMO_MODELS;
  // The flags meow hands the command by default (headless).
  const flags: CommandFlags = { retries: 2, ui: false, json: false };
  const ws = await openWorkspace(flags, { env: bench.env, cwd: bench.dir });
  const modes = {
    ...(opts.inPlace ? { inPlace: true } : {}),
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
  };
  const prepared = await prepareBonRun(
    ws,
    { spec: SPEC, arms: opts.arms ?? models.length, models, apply: false, ...modes, ...opts.args },
    flags,
  );
  if (opts.watched) prepared.session.watched = true;
  const events: RunEvent[] = [];
  prepared.run.subscribe((e) => {
    events.push(e);
    opts.onEvent?.(e, prepared.session);
  });
  opts.onPrepared?.(prepared);
  try {
    const ran = await execute(prepared.run, prepared.phases);
    // `--apply` (args.apply): the follow-up the headless command runs after the phases (src/cli/runPrepared.ts).
    const exit = opts.args?.apply && prepared.finish ? await prepared.finish(ran) : ran;
    return { exit, events, session: prepared.session, prepared };
  } finally {
    await prepared.close();
  }
}

/** `git status --porcelain` of the payload (ignored files such as adws/adw_data left out, as git does). */
export function treeStatus(dir: string): string {
  return git(dir, 'status', '--porcelain', '--untracked-files=all');
}

export function headOf(dir: string): string {
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** The trees (arm_1, prime…) a run has under a worktree base (`<base>/<repo key>/<run>/<name>`), by name. */
export function treesUnder(base: string): string[] {
  const list = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
  return list(base).flatMap((repo) =>
    list(path.join(base, repo)).flatMap((run) =>
      list(path.join(base, repo, run)).filter((name) => fs.existsSync(path.join(base, repo, run, name, '.git'))),
    ),
  );
}

/**
 * The bytes of what under the user's `.git` must end as it began (`rels`: files or folders, walked whole), the
 * factory's own refs and their logs aside: a run's hostile arms are judged by this never changing.
 */
export function gitBytes(dir: string, rels: readonly string[]): Record<string, string> {
  const base = path.join(dir, '.git');
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const abs = path.join(base, rel);
    if (!fs.existsSync(abs)) return;
    if (fs.statSync(abs).isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) {
        const child = path.join(rel, name);
        if (child !== 'refs/factory' && child !== 'logs/refs/factory') walk(child);
      }
      return;
    }
    out[rel] = fs.readFileSync(abs).toString('base64');
  };
  for (const rel of rels) walk(rel);
  return out;
}

/** The refs a bon run kept for its losing arms. */
export function armRefs(dir: string, adwId: string): string[] {
  return git(dir, 'for-each-ref', '--format=%(refname)', `refs/factory/${adwId}/`).split('\n').filter(Boolean);
}

export { alive, until } from './processes.js';

/** A best-of-3 SIGKILLed mid-arms, as the resume tests need it: what it left and what the model had been asked. */
export interface KilledBon {
  bench: BonBench;
  adwId: string;
  /** The environment the killed cockpit had (its FACTORY_WORKTREES included). */
  env: NodeJS.ProcessEnv;
  /** Requests per model tape before the kill. */
  asked: { alpha: number; beta: number; gamma: number };
}

/**
 * The demo's best-of-3 through the built CLI, headless, killed with SIGKILL once arms 1 (red) and 3 (green) are done
 * while arm 2 runs a long command. Arm 2's tape holds a second turn: what a fresh fork of the primer plays on resume.
 */
export async function killedMidArms(worktrees: string): Promise<KilledBon> {
  const demo = bonTapes(0);
  const beta = demo['model:beta']!;
  const bench = await bonBench({ ...demo, 'model:beta': [call('bash', { command: 'sleep 30' }), ...beta, ...beta] });
  const env = { ...bench.env, FACTORY_WORKTREES: worktrees };
  const child = spawn(
    process.execPath,
    [FACTORY_BIN, 'bon', SPEC, '--no-ui', '--models', 'scripted/alpha,scripted/beta,scripted/gamma'],
    {
      cwd: bench.dir,
      env: { ...env, CI: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  try {
    await until(
      'arms 1 and 3 finished, arm 2 at work',
      () => /arm_1 \(agent, attempt 1\/1\): failed/.test(log) && /arm_3 \(agent, attempt 1\/1\): OK/.test(log),
      60_000,
    );
  } catch (error) {
    child.kill('SIGKILL');
    await bench.cleanup();
    throw new Error(`${String(error)}\n${log}`);
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const requests = (tape: string) => bench.rig.model.requestsFor(tape).length;
  return {
    bench,
    adwId: /\[([0-9a-f]{8})\]/.exec(log)![1]!,
    env,
    asked: { alpha: requests('model:alpha'), beta: requests('model:beta'), gamma: requests('model:gamma') },
  };
}
