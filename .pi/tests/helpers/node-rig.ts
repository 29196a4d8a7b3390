// Real-pi harness for the socle's tests: a throwaway project with the factory node installed the way a
// user's repo gets it (installNode → a `packages` entry in .pi/settings.json), a scripted model, and
// one `pi -p --mode json --approve` run with the factory's node environment.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installNode } from '../../../src/pi/node.js';
import type { Tapes } from '../../../src/scripted/tape.js';
import { runPiJson, startRig, type PiEvent, type PiRun, type Rig } from '../../../test/helpers/rig.js';

/** The factory checkout these tests belong to. */
export const FACTORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The base envelope schema, shaped like the core's zod output (additional fields pass). */
export const ENVELOPE_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'BuildEnvelope',
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['success', 'fail'], description: 'success or fail' },
    summary: { type: 'string', description: 'one sentence' },
    artifacts: { type: 'array', items: { type: 'string' } },
    changed_files: { type: 'array', items: { type: 'string' } },
  },
  required: ['status', 'changed_files'],
  additionalProperties: {},
};

export interface NodeProject {
  dir: string;
  dataDir: string;
  schemaFile: string;
  cleanup(): void;
}

/** A fresh project folder with the node installed from `factoryRoot` (the real factory by default). */
export function makeNodeProject(factoryRoot = FACTORY_ROOT): NodeProject {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-node-')));
  installNode(dir, factoryRoot);
  const dataDir = path.join(dir, 'adws', 'adw_data');
  const schemaFile = path.join(dataDir, 'schemas', 'BuildEnvelope.json');
  mkdirSync(path.dirname(schemaFile), { recursive: true });
  writeFileSync(schemaFile, JSON.stringify(ENVELOPE_SCHEMA, null, 2));
  return { dir, dataDir, schemaFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of the factory's node (package.json manifest, .pi/extensions, .pi/lib) without some extension
 * files, its node_modules linked to the real one: a node where those extensions are really absent.
 */
export function makePartialFactory(without: string[]): { root: string; cleanup(): void } {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'factory-partial-')));
  cpSync(path.join(FACTORY_ROOT, 'package.json'), path.join(root, 'package.json'));
  cpSync(path.join(FACTORY_ROOT, '.pi', 'lib'), path.join(root, '.pi', 'lib'), { recursive: true });
  cpSync(
    path.join(FACTORY_ROOT, '.pi', 'damage-control-rules.yaml'),
    path.join(root, '.pi', 'damage-control-rules.yaml'),
  );
  cpSync(path.join(FACTORY_ROOT, '.pi', 'extensions'), path.join(root, '.pi', 'extensions'), {
    recursive: true,
    filter: (source) => !without.some((name) => path.basename(source) === `${name}.ts`),
  });
  symlinkSync(path.join(FACTORY_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function nodeEnv(project: NodeProject, extra: Record<string, string> = {}): Record<string, string> {
  return {
    FACTORY_ENVELOPE_SCHEMA: project.schemaFile,
    FACTORY_EXPECTED: 'factory-report,factory-inventory,damage-control,factory-obs,factory-guard',
    FACTORY_PHASE: 'build',
    FACTORY_ROLE: 'builder',
    FACTORY_ADW_ID: 'a1b2c3d4',
    FACTORY_DATA_DIR: project.dataDir,
    ...extra,
  };
}

/** One json-mode run of the real pi in `project`, with the project trusted (`--approve`). */
export function runNode(
  rig: Rig,
  project: NodeProject,
  prompt: string,
  env: Record<string, string> = nodeEnv(project),
): Promise<PiRun> {
  return runPiJson({ ...rig, env: { ...rig.env, ...env } }, { cwd: project.dir, prompt, args: ['--approve'] });
}

export function startNodeRig(tapes: Tapes): Promise<Rig> {
  return startRig({ tapes });
}

export function toolEnds(events: PiEvent[], toolName: string): PiEvent[] {
  return events.filter((e) => e.type === 'tool_execution_end' && e.toolName === toolName);
}

export function resultText(event: PiEvent | undefined): string {
  const result = (event?.result ?? {}) as { content?: { type: string; text?: string }[] };
  return (result.content ?? []).map((c) => c.text ?? '').join('');
}

export function inventories(events: PiEvent[]): { pi_version: string; present: string[]; missing: string[] }[] {
  return events
    .filter((e) => e.type === 'entry_appended')
    .map((e) => e.entry as { type?: string; customType?: string; data?: unknown })
    .filter((entry) => entry?.type === 'custom' && entry.customType === 'factory-inventory')
    .map((entry) => entry.data as { pi_version: string; present: string[]; missing: string[] });
}

export interface RpcNode {
  /** Every JSON line pi wrote so far. */
  lines: PiEvent[];
  send(command: Record<string, unknown>): void;
  /** Resolves at the first line (from now on) that passes `test`. */
  until(test: (line: PiEvent) => boolean): Promise<PiEvent>;
  /** Sends a prompt and waits for `agent_settled`. */
  prompt(message: string): Promise<void>;
  close(): Promise<void>;
}

/** A `pi --mode rpc --approve` process in `project` (here ctx.hasUI is true: dialogs come as requests). */
export function startRpcNode(rig: Rig, project: NodeProject, env: Record<string, string> = nodeEnv(project)): RpcNode {
  const args = [
    ...rig.pi.prefixArgs,
    '--mode',
    'rpc',
    '--approve',
    '--model',
    rig.agentDir.route,
    '--session-dir',
    rig.sessionDir,
  ];
  const child = spawn(rig.pi.command, args, {
    cwd: project.dir,
    env: { ...rig.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: PiEvent[] = [];
  const waiters: { test: (line: PiEvent) => boolean; resolve: (line: PiEvent) => void }[] = [];
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let cut = buffer.indexOf('\n'); cut >= 0; cut = buffer.indexOf('\n')) {
      const text = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      let line: PiEvent;
      try {
        line = JSON.parse(text) as PiEvent;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (!waiter.test(line)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr.resume();
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const until = (test: (line: PiEvent) => boolean) =>
    new Promise<PiEvent>((resolve) => waiters.push({ test, resolve }));
  const send = (command: Record<string, unknown>) => child.stdin.write(`${JSON.stringify(command)}\n`);
  return {
    lines,
    send,
    until,
    async prompt(message) {
      const settled = until((l) => l.type === 'agent_settled');
      send({ type: 'prompt', message });
      await settled;
    },
    async close() {
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(killer);
    },
  };
}
