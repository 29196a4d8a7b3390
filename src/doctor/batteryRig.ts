// The node battery's rig (./nodeBattery.ts): a throwaway project set up as `factory init` sets up a repository, the
// pi the cockpit will use spawned there against the scripted model (json and RPC modes, a compaction), and the
// readers of what it printed.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { envelopeCard } from '../envelope/catalog.js';
import { childEnv, emptyDotEnv } from '../config/env.js';
import { writeSchemaFile } from '../pi/launch.js';
import { jsonModeArgs, rpcModeArgs } from '../pi/argv.js';
import { nodeExtensionFiles, seedNode } from '../pi/node.js';
import type { PiCommand } from '../pi/resolve.js';
import { piAcceptsNoMcp } from '../pi/piVersion.js';
import { spawnSupervised, type SupervisedChild } from '../process/supervisor.js';
import { makeAgentDir } from '../scripted/agentDir.js';
import type { ScriptedModel } from '../scripted/server.js';

export interface BatteryOptions {
  pi: PiCommand;
  /** The factory folder whose `.pi` node is tested. */
  factoryRoot: string;
  /** The cockpit's environment: only its allowlist passes, never a key (the model is scripted). */
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export type Line = { type?: string; [key: string]: unknown };

export const ENVELOPE = { status: 'success', summary: 'battery', changed_files: ['obs.txt'] };
export const BRIEF_MARKER = 'battery-brief-7c1e: the builder writes only under src/';
export const MISSION = 'battery mission 3f9a: keep this sentence verbatim through compaction [tape:compact]';
export const ADW_ID = 'b4773e11';

export function parseLines(text: string): Line[] {
  const out: Line[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    try {
      out.push(JSON.parse(raw) as Line);
    } catch {
      // pi writes only JSON lines on stdout; anything else is not an event
    }
  }
  return out;
}

export function toolEnds(lines: Line[], tool: string): Line[] {
  return lines.filter((l) => l.type === 'tool_execution_end' && l.toolName === tool);
}

export function resultText(line: Line | undefined): string {
  const content = ((line?.result ?? {}) as { content?: Array<{ text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

export function customEntries(lines: Line[], customType: string): unknown[] {
  return lines
    .filter((l) => l.type === 'entry_appended')
    .map((l) => l.entry as { customType?: string; data?: unknown } | undefined)
    .filter((e) => e?.customType === customType)
    .map((e) => e?.data);
}

export interface Spawned {
  child: SupervisedChild;
  stdout: () => string;
  done: Promise<number | null>;
}

export function spawnPi(opts: BatteryOptions, project: Project, argv: string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawnSupervised(opts.pi.command, [...opts.pi.prefixArgs, ...argv], { cwd: project.dir, env });
  project.live.children.add(child);
  if (project.live.expired) void child.kill(500); // started after the deadline: it gets no time at all
  void child.exited.then(() => project.live.children.delete(child));
  let out = '';
  child.child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.child.stderr.resume();
  child.child.on('error', () => {});
  child.child.stdin.on('error', () => {});
  // `exit` may come before stdout is drained: the verdict waits for `close` too (bounded: a grandchild may hold the pipe).
  const drained = new Promise<void>((resolve) => child.child.once('close', () => resolve()));
  const done = child.exited.then(async (e) => {
    await Promise.race([drained, new Promise((r) => setTimeout(r, 2000).unref())]);
    return e.code;
  });
  return { child, stdout: () => out, done };
}

export async function jsonRun(
  opts: BatteryOptions,
  project: Project,
  prompt: string,
  extra: Record<string, string> = {},
) {
  const sessionId = randomUUID();
  const argv = jsonModeArgs({
    sessionId,
    sessionDir: project.sessionDir,
    model: project.route,
    noMcp: piAcceptsNoMcp(opts.pi),
    extensions: nodeExtensionFiles(project.dir, opts.factoryRoot),
  });
  const run = spawnPi(opts, project, argv, { ...project.env, ...extra });
  run.child.child.stdin.end(prompt);
  const code = await run.done;
  return { code, lines: parseLines(run.stdout()), sessionId };
}

/** Two turns of a long-lived pi, then a manual compaction: its response carries the stored summary. */
export async function compactOnce(opts: BatteryOptions, project: Project): Promise<Line | Error> {
  const argv = rpcModeArgs({
    sessionId: randomUUID(),
    sessionDir: project.sessionDir,
    model: project.route,
    noMcp: piAcceptsNoMcp(opts.pi),
    extensions: nodeExtensionFiles(project.dir, opts.factoryRoot),
  });
  const run = spawnPi(opts, project, argv, project.env);
  let ended = false; // by exit code or by signal (a kill leaves exitCode null)
  void run.done.then(() => (ended = true));
  const seen = (test: (l: Line) => boolean, from: number) =>
    new Promise<Line>((resolve, reject) => {
      const look = () => {
        const hit = parseLines(run.stdout()).slice(from).find(test);
        if (hit) return resolve(hit);
        if (ended) return reject(new Error('pi --mode rpc ended before answering'));
        setTimeout(look, 20);
      };
      look();
    });
  const send = (command: Record<string, unknown>) => run.child.child.stdin.write(`${JSON.stringify(command)}\n`);
  try {
    for (const message of [MISSION, 'go on [tape:compact]']) {
      const from = parseLines(run.stdout()).length;
      send({ type: 'prompt', message });
      await seen((l) => l.type === 'agent_settled', from);
    }
    const from = parseLines(run.stdout()).length;
    send({ type: 'compact' });
    return await seen((l) => l.type === 'response' && l.command === 'compact', from);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    run.child.child.stdin.end();
    await Promise.race([run.done, new Promise((r) => setTimeout(r, 5000).unref())]);
    await run.child.kill(500);
  }
}

export interface Live {
  children: Set<SupervisedChild>;
  expired: boolean;
}

export interface Project {
  dir: string;
  /** This battery's own pi processes: a timeout ends these, never another child of the cockpit (a run the doctor overlays). */
  live: Live;
  dataDir: string;
  sessionDir: string;
  route: string;
  env: NodeJS.ProcessEnv;
}

export async function makeProject(
  scratch: string,
  opts: BatteryOptions,
  model: ScriptedModel,
  expected: string[],
  live: Live,
): Promise<Project> {
  const dir = path.join(scratch, 'project');
  fs.mkdirSync(path.join(dir, 'adws', 'adw_config', 'briefs'), { recursive: true });
  seedNode(dir, opts.factoryRoot); // as `factory init` does: the node is given to pi at each start (-e)
  // The project's brief wins over the factory's default: a marker only this file carries proves the injection.
  fs.writeFileSync(path.join(dir, 'adws', 'adw_config', 'briefs', 'builder.md'), `# Builder\n\n${BRIEF_MARKER}\n`);
  const dataDir = path.join(dir, 'adws', 'adw_data');
  const card = await envelopeCard('BuildEnvelope');
  const schemaFile = writeSchemaFile(path.join(dataDir, 'schemas'), card.title, card.schema);
  const sessionDir = path.join(dataDir, 'sessions');
  fs.mkdirSync(sessionDir, { recursive: true });
  // A short session has something to compact only when pi keeps few recent tokens (its default is 20k).
  const agent = makeAgentDir({
    baseUrl: model.baseUrl,
    dir: path.join(scratch, 'agent'),
    settings: { compaction: { enabled: true, keepRecentTokens: 10 } },
  });
  // The cockpit's allowlist with the vault closed (no key at all: the model is scripted), then the private agent dir.
  const env: NodeJS.ProcessEnv = { ...childEnv({ real: opts.env, dotenv: emptyDotEnv(dir), profile: { keys: [] } }) };
  Object.assign(env, agent.env, {
    FACTORY_ENVELOPE_SCHEMA: schemaFile,
    FACTORY_EXPECTED: expected.join(','),
    FACTORY_PHASE: 'build',
    FACTORY_ROLE: 'builder',
    FACTORY_ADW_ID: ADW_ID,
    FACTORY_DATA_DIR: dataDir,
  });
  return { dir, live, dataDir, sessionDir, route: agent.route, env };
}
