// The real-pi test rig: a scripted model server, a private pi agent dir pointing at it, the pi to run,
// and a helper that runs one `pi -p --mode json` turn and hands back its parsed event stream.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledPi, checkPi, factoryRoot, resolvePi, type PiCommand } from '../../src/pi/resolve.js';
import { makeAgentDir, type AgentDir, type ScriptedModelSpec } from '../../src/scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted/server.js';
import type { Tapes } from '../../src/scripted/tape.js';

export interface Rig {
  model: ScriptedModel;
  agentDir: AgentDir;
  /**
   * The whole env to give pi or a CLI child: a few process basics, the agent dir's entries (no stray keys) and
   * FACTORY_PI naming the pi under test, so a `factory` child runs that pi, never one found on PATH.
   */
  env: Record<string, string>;
  pi: PiCommand;
  /** `pi --version` of the pi under test (read once per test process): assert this, never a literal. */
  piVersion: string;
  /** A session dir private to this rig. */
  sessionDir: string;
  cleanup(): Promise<void>;
}

export interface RigOptions {
  tapes: Tapes;
  models?: ScriptedModelSpec[];
  settings?: Record<string, unknown>;
}

// FACTORY_WORKTREES: the test run's own worktree root (test/global-setup.ts).
const BASIC_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'FACTORY_WORKTREES'];

/**
 * The pi under test: FACTORY_PI when the developer (or CI's ceiling leg) sets it, otherwise the bundled pi
 * on Node 22, never whatever `pi` happens to be on PATH.
 */
export async function piForTests(): Promise<PiCommand> {
  const root = factoryRoot();
  if (process.env.FACTORY_PI) return resolvePi({ env: process.env, factoryRoot: root });
  const pi = bundledPi(root);
  if (!pi) throw new Error('the bundled pi is missing from node_modules: run npm install');
  return pi;
}

/** The FACTORY_PI value that makes a child resolve exactly `pi`: its JS CLI (run by a suitable Node), else the executable. */
export function factoryPiValue(pi: PiCommand): string {
  const script = pi.prefixArgs[0];
  return script !== undefined && /\.(c|m)?js$/.test(script) ? script : pi.command;
}

export interface PiUnderTest {
  pi: PiCommand;
  version: string;
  /** FACTORY_PI for a child process (see factoryPiValue). */
  factoryPi: string;
}

let underTest: Promise<PiUnderTest> | undefined;

/** The pi under test with its version, resolved and asked once per test process (`pi --version` costs ~0.5 s). */
export function piUnderTest(): Promise<PiUnderTest> {
  underTest ??= (async () => {
    const pi = await piForTests();
    const { version } = await checkPi(pi, {
      env: { ...basicEnv(), PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0' },
    });
    return { pi, version, factoryPi: factoryPiValue(pi) };
  })();
  return underTest;
}

/** The few process basics a child needs (PATH, HOME, locale…), nothing else of the test runner's env. */
export function basicEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of BASIC_ENV) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** basicEnv plus FACTORY_PI naming the pi under test: for a CLI child that builds its own pi agent dir (demo, bon-cli). */
export async function cliChildEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { ...basicEnv(), FACTORY_PI: (await piUnderTest()).factoryPi, ...extra };
}

export async function startRig(opts: RigOptions): Promise<Rig> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'factory-rig-')));
  const sessionDir = join(root, 'sessions');
  mkdirSync(sessionDir);
  const model = await startScriptedModel({ tapes: opts.tapes, models: opts.models?.map((m) => m.id) });
  try {
    const agentDir = makeAgentDir({
      baseUrl: model.baseUrl,
      dir: join(root, 'agent'),
      models: opts.models,
      settings: opts.settings,
    });
    const { pi, version, factoryPi } = await piUnderTest();
    const env: Record<string, string> = { ...basicEnv(), ...agentDir.env, FACTORY_PI: factoryPi };
    return {
      model,
      agentDir,
      env,
      pi,
      piVersion: version,
      sessionDir,
      cleanup: async () => {
        await model.close();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await model.close();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

export type PiEvent = { type: string; [key: string]: unknown };

export interface PiRun {
  events: PiEvent[];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  sessionId: string;
}

export interface RunPiOptions {
  cwd: string;
  prompt: string;
  /** `provider/id`; the agent dir's first model by default. */
  model?: string;
  sessionId?: string;
  /** Extra flags placed before `--`. */
  args?: string[];
  /** Safety net only: kills a pi that never ends so a broken test fails instead of hanging. */
  killAfterMs?: number;
}

/** One `pi -p --mode json` run, prompt on stdin, stdout drained to the end and parsed line by line. */
export function runPiJson(rig: Rig, opts: RunPiOptions): Promise<PiRun> {
  const sessionId = opts.sessionId ?? randomUUID();
  const argv = [
    ...rig.pi.prefixArgs,
    '-p',
    '--mode',
    'json',
    '--model',
    opts.model ?? rig.agentDir.route,
    '--no-skills',
    '--no-prompt-templates',
    '--session-dir',
    rig.sessionDir,
    '--session-id',
    sessionId,
    ...(opts.args ?? []),
    '--',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(rig.pi.command, argv, { cwd: opts.cwd, env: rig.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 30_000);
    child.on('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(guard);
      const events: PiEvent[] = [];
      for (const line of stdout.split('\n')) {
        if (!line.trim()) continue;
        try {
          const parsed = JSON.parse(line) as unknown;
          if (parsed && typeof parsed === 'object' && typeof (parsed as PiEvent).type === 'string')
            events.push(parsed as PiEvent);
        } catch {
          // pi's json mode only writes JSON lines; anything else is not an event
        }
      }
      resolve({ events, exitCode, signal, stderr, sessionId });
    });
    child.stdin.end(opts.prompt);
  });
}

export interface AssistantMessage {
  role: 'assistant';
  content: { type: string; text?: string; name?: string; arguments?: unknown }[];
  stopReason?: string;
  errorMessage?: string;
  provider?: string;
  model?: string;
  usage?: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    totalTokens: number;
    cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  };
}

/** Every assistant `message_end` message, in order. */
export function assistantMessages(events: PiEvent[]): AssistantMessage[] {
  return events
    .filter((e) => e.type === 'message_end')
    .map((e) => e.message as AssistantMessage | undefined)
    .filter((m): m is AssistantMessage => m?.role === 'assistant');
}

export function lastAssistant(events: PiEvent[]): AssistantMessage | undefined {
  return assistantMessages(events).at(-1);
}

export function textOf(message: AssistantMessage | undefined): string {
  return (message?.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('');
}
