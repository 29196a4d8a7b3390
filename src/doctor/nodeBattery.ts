// The node battery: the factory's pi node loaded whole by the pi the cockpit will use, in a throwaway project
// set up the way `factory init` sets up a repository, each extension proven active by what it does — at zero
// tokens (a scripted model on 127.0.0.1, a private pi agent dir, no key, no network). It needs nothing but
// the cockpit itself: an installed cockpit has no test runner, so the battery is plain code, and the
// `.pi/tests` suite of a checkout asserts the very same probes.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { envelopeCard } from '../envelope/catalog.js';
import { childEnv, emptyDotEnv } from '../config/env.js';
import { writeSchemaFile } from '../pi/launch.js';
import { readCheckpoint } from '../../.pi/lib/checkpoint.js';
import { SOCLE } from '../harness/types.js';
import { jsonModeArgs, rpcModeArgs } from '../pi/argv.js';
import { nodeExtensionFiles, NODE_EXTENSIONS, seedNode } from '../pi/node.js';
import type { PiCommand } from '../pi/resolve.js';
import { piAcceptsNoMcp } from '../pi/piVersion.js';
import { spawnSupervised, type SupervisedChild } from '../process/supervisor.js';
import { makeAgentDir } from '../scripted/agentDir.js';
import { startScriptedModel, type ScriptedModel } from '../scripted/server.js';
import { call, report, say } from '../scripted/tape.js';

export interface BatteryProbe {
  /** The extension (or `pi`) the probe proves. */
  name: string;
  ok: boolean;
  /** What was seen: one line. */
  detail: string;
}

export interface BatteryOutcome {
  probes: BatteryProbe[];
  /** The version the inventory reported (the pi that really ran the node). */
  piVersion?: string;
  /** The deadline ended the battery's pi processes: the red probes say so, not what the node does. */
  timedOut: boolean;
  ms: number;
}

export interface BatteryOptions {
  pi: PiCommand;
  /** The factory folder whose `.pi` node is tested. */
  factoryRoot: string;
  /** The cockpit's environment: only its allowlist passes, never a key (the model is scripted). */
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

type Line = { type?: string; [key: string]: unknown };

const ENVELOPE = { status: 'success', summary: 'battery', changed_files: ['obs.txt'] };
const BRIEF_MARKER = 'battery-brief-7c1e: the builder writes only under src/';
const MISSION = 'battery mission 3f9a: keep this sentence verbatim through compaction [tape:compact]';
const ADW_ID = 'b4773e11';

/** The node's extensions whose file exists in `factoryRoot`, in the node's order. */
export function extensionsOnDisk(factoryRoot: string): string[] {
  return NODE_EXTENSIONS.filter((name) => fs.existsSync(path.join(factoryRoot, '.pi', 'extensions', `${name}.ts`)));
}

/** What the inventory must report: the socle always (a missing file is a missing extension), plus the rest on disk. */
export function expectedExtensions(factoryRoot: string): string[] {
  const onDisk = extensionsOnDisk(factoryRoot);
  return NODE_EXTENSIONS.filter((name) => onDisk.includes(name) || (SOCLE as readonly string[]).includes(name));
}

function parseLines(text: string): Line[] {
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

function toolEnds(lines: Line[], tool: string): Line[] {
  return lines.filter((l) => l.type === 'tool_execution_end' && l.toolName === tool);
}

function resultText(line: Line | undefined): string {
  const content = ((line?.result ?? {}) as { content?: Array<{ text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

function customEntries(lines: Line[], customType: string): unknown[] {
  return lines
    .filter((l) => l.type === 'entry_appended')
    .map((l) => l.entry as { customType?: string; data?: unknown } | undefined)
    .filter((e) => e?.customType === customType)
    .map((e) => e?.data);
}

interface Spawned {
  child: SupervisedChild;
  stdout: () => string;
  done: Promise<number | null>;
}

function spawnPi(opts: BatteryOptions, project: Project, argv: string[], env: NodeJS.ProcessEnv): Spawned {
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

async function jsonRun(opts: BatteryOptions, project: Project, prompt: string, extra: Record<string, string> = {}) {
  const sessionId = randomUUID();
  const argv = jsonModeArgs({ sessionId, sessionDir: project.sessionDir, model: project.route, noMcp: piAcceptsNoMcp(opts.pi), extensions: nodeExtensionFiles(project.dir, opts.factoryRoot) });
  const run = spawnPi(opts, project, argv, { ...project.env, ...extra });
  run.child.child.stdin.end(prompt);
  const code = await run.done;
  return { code, lines: parseLines(run.stdout()), sessionId };
}

/** Two turns of a long-lived pi, then a manual compaction: its response carries the stored summary. */
async function compactOnce(opts: BatteryOptions, project: Project): Promise<Line | Error> {
  const argv = rpcModeArgs({ sessionId: randomUUID(), sessionDir: project.sessionDir, model: project.route, noMcp: piAcceptsNoMcp(opts.pi), extensions: nodeExtensionFiles(project.dir, opts.factoryRoot) });
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

interface Live {
  children: Set<SupervisedChild>;
  expired: boolean;
}

interface Project {
  dir: string;
  /** This battery's own pi processes: a timeout ends these, never another child of the cockpit (a run the doctor overlays). */
  live: Live;
  dataDir: string;
  sessionDir: string;
  route: string;
  env: NodeJS.ProcessEnv;
}

async function makeProject(scratch: string, opts: BatteryOptions, model: ScriptedModel, expected: string[], live: Live): Promise<Project> {
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
  const agent = makeAgentDir({ baseUrl: model.baseUrl, dir: path.join(scratch, 'agent'), settings: { compaction: { enabled: true, keepRecentTokens: 10 } } });
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

function probe(name: string, checks: Array<[boolean, string]>, okDetail: string): BatteryProbe {
  const failed = checks.find(([ok]) => !ok);
  return failed ? { name, ok: false, detail: failed[1] } : { name, ok: true, detail: okDetail };
}

/** Runs the battery; never throws for a red node (each probe says what it saw), only for a broken set-up. */
export async function runNodeBattery(opts: BatteryOptions): Promise<BatteryOutcome> {
  const start = performance.now();
  const expected = expectedExtensions(opts.factoryRoot);
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-battery-')));
  const model = await startScriptedModel({
    tapes: {
      // One phase through the whole node: a destructive command, a traced command, then the gate.
      pipeline: [call('bash', { command: 'rm -rf /' }), call('bash', { command: 'echo battery > obs.txt' }), report(ENVELOPE), say('never requested')],
      guard: [call('bash', { command: 'echo one' }), call('bash', { command: 'echo two > two.txt' }), say('never requested')],
      compact: [say('noted'), say('still noted'), say('## Progress\n### Done\n- the battery ran')],
    },
  });
  const live: Live = { children: new Set(), expired: false };
  const timer = setTimeout(() => {
    live.expired = true;
    live.children.forEach((child) => void child.kill(500));
  }, opts.timeoutMs ?? 180_000);
  try {
    const project = await makeProject(scratch, opts, model, expected, live);
    const [pipeline, guarded, compaction] = await Promise.all([
      jsonRun(opts, project, 'run the battery [tape:pipeline]'),
      jsonRun(opts, project, 'run the guard [tape:guard]', { FACTORY_MAX_TOOL_CALLS: '1' }),
      expected.includes('factory-compact') ? compactOnce(opts, project) : Promise.resolve(undefined),
    ]);
    const probes: BatteryProbe[] = [];
    probes.push(probe('pi', [[pipeline.code === 0 && guarded.code === 0, `pi exited ${pipeline.code ?? 'by a signal'} / ${guarded.code ?? 'by a signal'}`]], 'ran both phases to their end'));

    const inventories = customEntries(pipeline.lines, 'factory-inventory') as Array<{ pi_version?: string; present?: string[]; missing?: string[] }>;
    const inventory = inventories[0];
    const at = pipeline.lines.findIndex((l) => l.type === 'entry_appended');
    const firstAnswer = pipeline.lines.findIndex((l) => l.type === 'message_end' && (l.message as { role?: string } | undefined)?.role === 'assistant');
    probes.push(
      probe('factory-inventory', [
        [inventories.length === 1, `${inventories.length} inventory entries (one expected)`],
        [(inventory?.missing ?? ['?']).length === 0, `missing: ${(inventory?.missing ?? []).join(', ')}`],
        [isDeepStrictEqual([...(inventory?.present ?? [])].sort(), [...expected].sort()), `present: ${(inventory?.present ?? []).join(', ') || 'none'}`],
        [at >= 0 && at < firstAnswer, 'the inventory came after the first answer'],
      ], `${expected.length}/${expected.length} extensions loaded (pi ${inventory?.pi_version ?? '?'})`),
    );

    const [blocked, allowed] = toolEnds(pipeline.lines, 'bash');
    const obsFile = path.join(project.dir, 'obs.txt');
    probes.push(
      probe('damage-control', [
        [blocked?.isError === true && /^Blocked by damage-control/.test(resultText(blocked)), '`rm -rf /` was not blocked'],
        [allowed?.isError === false && fs.existsSync(obsFile) && fs.readFileSync(obsFile, 'utf8') === 'battery\n', 'a harmless command did not run'],
      ], '`rm -rf /` blocked, a harmless command ran'),
    );

    const [reported] = toolEnds(pipeline.lines, 'report_phase');
    probes.push(
      probe('factory-report', [
        [reported?.isError === false, 'report_phase was not registered or refused the envelope'],
        [isDeepStrictEqual((reported?.result as { details?: unknown } | undefined)?.details, ENVELOPE), 'report_phase did not return the envelope'],
        [model.requestsFor('pipeline').length === 3, `${model.requestsFor('pipeline').length} model calls (the report must end the run at 3)`],
      ], 'report_phase validated the envelope and ended the run'),
    );

    const traceFile = path.join(project.dataDir, 'traces', 'harness', `${pipeline.sessionId}.jsonl`);
    const trace = fs.existsSync(traceFile) ? parseLines(fs.readFileSync(traceFile, 'utf8')) : [];
    const stamped = trace.find((l) => l.type === 'tool_end' && l.tool_name === 'bash');
    probes.push(
      probe('factory-obs', [
        [trace.length > 0, `no harness trace at ${traceFile}`],
        [trace[0]?.type === 'session_start' && trace.at(-1)?.type === 'session_shutdown', 'the trace does not run from session_start to session_shutdown'],
        [trace.filter((l) => l.type === 'tool_end').length === 3, 'the trace does not hold the three tool calls'],
        [stamped?.phase === 'build' && stamped?.role === 'builder' && stamped?.adw_id === ADW_ID, 'trace lines are not stamped with the phase'],
      ], 'the harness trace holds the session, its tool calls and the shutdown'),
    );

    const guardEnds = toolEnds(guarded.lines, 'bash');
    probes.push(
      probe('factory-guard', [
        [guardEnds.length === 2 && guardEnds[0]?.isError === false && guardEnds[1]?.isError === true, 'the call over the limit was not blocked'],
        [resultText(guardEnds[1]).includes('factory-guard tripped'), 'the block does not name factory-guard'],
        [!fs.existsSync(path.join(project.dir, 'two.txt')), 'the blocked command ran anyway'],
        [model.requestsFor('guard').length === 2, 'the agent was not stopped after the trip'],
      ], 'the call over FACTORY_MAX_TOOL_CALLS was blocked and the agent stopped'),
    );

    if (expected.includes('factory-context')) {
      const first = JSON.stringify(model.requestsFor('pipeline')[0]?.body.messages ?? []);
      probes.push(probe('factory-context', [[first.includes(BRIEF_MARKER), 'the role brief did not reach the model']], 'the role brief reached the model with the first request'));
    }
    if (compaction !== undefined) {
      const summary = compaction instanceof Error ? '' : String((compaction.data as { summary?: unknown } | undefined)?.summary ?? '');
      probes.push(
        probe('factory-compact', [
          [!(compaction instanceof Error) && compaction.success === true, compaction instanceof Error ? compaction.message : 'the compaction failed'],
          [readCheckpoint(summary).carried?.mission?.text === MISSION, 'the summary lost the [FACTORY] block or the mission in it'],
        ], 'a compaction kept the [FACTORY] block and the mission verbatim'),
      );
    }
    return { probes, piVersion: inventory?.pi_version, timedOut: live.expired, ms: performance.now() - start };
  } finally {
    clearTimeout(timer);
    await model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
