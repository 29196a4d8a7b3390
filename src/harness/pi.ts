// The pi adapter: one `pi -p --mode json` process per attempt. The prompt goes on stdin; stdout is read
// incrementally (a huge tool output must never be buffered whole) by the pure reader, then judged by the pure
// verdict. Every failure is a HarnessError carrying the session id chosen before the call.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HarnessError } from '../errors.js';
import { declareSession, resumeRequiresCwd } from '../ledger.js';
import { jsonModeArgs } from '../pi/argv.js';
import { LineSplitter } from '../pi/lines.js';
import { StreamReader, toActivity } from '../pi/stream.js';
import { verdict } from '../pi/verdict.js';
import { piAcceptsNoMcp } from '../pi/piVersion.js';
import { diagnoseStartFailure, PI_MIN_VERSION, type PiCommand } from '../pi/resolve.js';
import { spawnSupervised } from '../process/supervisor.js';
import { withFallback } from './fallback.js';
import { guardAttempt } from './guards.js';
import { SOCLE, type Harness, type HarnessRequest, type HarnessResult } from './types.js';

const STDERR_TAIL_BYTES = 8 * 1024;

/** Environment of the node: identity, limits and the gate's schema travel here, never in the prompt. */
export function nodeEnv(request: Pick<HarnessRequest, 'env' | 'identity' | 'workspace' | 'limits'>, schemaFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...(request.env ?? process.env),
    FACTORY_ENVELOPE_SCHEMA: schemaFile,
    FACTORY_EXPECTED: SOCLE.join(','),
    FACTORY_PHASE: request.identity.phase,
    FACTORY_ROLE: request.identity.role,
    FACTORY_ADW_ID: request.identity.adwId,
    FACTORY_DATA_DIR: request.workspace.dataDir,
  };
  const { limits } = request;
  if (limits?.maxTurns !== undefined) env.FACTORY_MAX_TURNS = String(limits.maxTurns);
  if (limits?.maxToolCalls !== undefined) env.FACTORY_MAX_TOOL_CALLS = String(limits.maxToolCalls);
  if (limits?.maxCostUsd !== undefined) env.FACTORY_MAX_COST_USD = String(limits.maxCostUsd);
  return env;
}

export function writeSchemaFile(schemasDir: string, title: string, schema: object): string {
  if (!/^[A-Za-z0-9_-]+$/.test(title)) throw new Error(`envelope title is not a safe file name: ${title}`);
  fs.mkdirSync(schemasDir, { recursive: true });
  const file = path.join(schemasDir, `${title}.json`);
  fs.writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
  return file;
}

function lastLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? '';
}

/** The end of a child's stderr, bounded: evidence for a one-line motif without buffering it all. */
export class StderrTail {
  private buf = '';
  push(chunk: Buffer | string): void {
    this.buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (this.buf.length > STDERR_TAIL_BYTES * 2) this.buf = this.buf.slice(-STDERR_TAIL_BYTES);
  }
  get text(): string {
    return this.buf.slice(-STDERR_TAIL_BYTES);
  }
}

export function createPiHarness(pi: PiCommand): Harness {
  return { name: 'pi', run: (request) => withFallback(request, (r, reason) => runPiAttempt(pi, r, reason)) };
}

/** One pi process. `reason` names why this start exists beyond the first (e.g. "fallback"), for the ledger. */
export async function runPiAttempt(pi: PiCommand, request: HarnessRequest, reason?: string): Promise<HarnessResult> {
  const paths = request.workspace;
  const sessionId = request.sessionId ?? randomUUID();
  const cwd = path.resolve(request.cwd);
  const resume = resumeRequiresCwd(sessionId, cwd, { ledgerFile: paths.ledgerFile, sessionDir: paths.sessionsDir });
  if (!resume.allowed) throw new HarnessError(`resume refused: ${resume.motif}`, sessionId, { kind: 'resume' });
  if (request.signal?.aborted) throw new HarnessError('interrupted before pi started', sessionId, { kind: 'aborted' });

  const schemaFile = writeSchemaFile(paths.schemasDir, request.envelopeSchema.title, request.envelopeSchema.schema);
  declareSession(paths.ledgerFile, { sessionId, cwd, model: request.model, phase: request.identity.phase, adwId: request.identity.adwId, reason });

  const argv = [
    ...pi.prefixArgs,
    ...jsonModeArgs({
      sessionId,
      sessionDir: paths.sessionsDir,
      model: request.model,
      thinking: request.thinking,
      tools: request.tools,
      // Known from pi's package.json (or an earlier checkPi) without spawning it: no `pi --version` per attempt.
      noMcp: piAcceptsNoMcp(pi),
    }),
  ];
  const started = performance.now();
  const proc = spawnSupervised(pi.command, argv, {
    cwd,
    env: nodeEnv(request, schemaFile),
    runTag: request.identity.adwId,
  });

  const splitter = new LineSplitter();
  const reader = new StreamReader();
  const stderr = new StderrTail();
  let spawnError: Error | undefined;
  let stopped: { motif: string; kind: string } | undefined;
  // 0, not -1: the user message's message_end (zero tokens) is not a usage report.
  let lastTokens = 0;

  const stop = (motif: string, kind: string) => {
    if (stopped) return;
    stopped = { motif, kind };
    void proc.kill();
  };
  const feed = (lines: string[]) => {
    for (const line of lines) {
      const event = reader.feed(line);
      if (!event) continue;
      const activity = toActivity(event);
      if (activity) request.onActivity?.(activity);
      if (event.type !== 'message_end') continue; // usage only moves there; summaries are snapshots, not free
      const { tokens, cost } = reader.summary;
      if (tokens !== lastTokens) {
        lastTokens = tokens;
        request.onUsage?.({ tokens, cost });
      }
    }
  };

  const idleSeconds = Math.round(request.idleTimeoutMs / 1000);
  let idleTimer = setTimeout(() => stop(`no progress from pi for ${idleSeconds} s — watchdog ended it`, 'stalled'), request.idleTimeoutMs);
  const disarm = guardAttempt(request, stop);

  proc.child.on('error', (error) => {
    spawnError = error;
  });
  proc.child.stdout.on('data', (chunk: Buffer) => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => stop(`no progress from pi for ${idleSeconds} s — watchdog ended it`, 'stalled'), request.idleTimeoutMs);
    feed(splitter.push(chunk));
  });
  proc.child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  // pi crashes with EPIPE if its stdin write fails silently; an early death is reported by the exit below.
  proc.child.stdin.on('error', () => {});
  proc.child.stdin.end(request.prompt, 'utf8');

  const stdoutDone = new Promise<void>((resolve) => proc.child.stdout.once('close', () => resolve()));
  const exit = await proc.exited;
  await Promise.race([stdoutDone, new Promise((r) => setTimeout(r, 2000).unref())]);
  feed(splitter.end());
  clearTimeout(idleTimer);
  disarm();

  const summary = reader.summary;
  const seconds = (performance.now() - started) / 1000;
  const evidence = { tokens: summary.tokens, cost: summary.cost, stderrTail: stderr.text };
  if (spawnError) {
    throw new HarnessError(`pi could not start (${pi.display}): ${spawnError.message}`, sessionId, { ...evidence, kind: 'spawn' });
  }
  if (stopped) throw new HarnessError(stopped.motif, sessionId, { ...evidence, kind: stopped.kind });
  if (summary.lines - summary.nonJson === 0 && exit.code !== 0) {
    // No stream at all: pi died while starting (old Node, broken extension, bad flag). That is not a verdict
    // on an attempt; say why pi did not start.
    const why = diagnoseStartFailure(stderr.text) ?? (lastLine(stderr.text) || `exit ${exit.code ?? exit.signal}`);
    throw new HarnessError(`pi did not start (${pi.display}): ${why}`, sessionId, { ...evidence, kind: 'spawn' });
  }

  const judged = verdict(summary, {
    exitCode: exit.code,
    signal: exit.signal,
    requestedModel: request.model,
    expectedSocle: [...SOCLE],
    stderrTail: stderr.text,
    minVersion: PI_MIN_VERSION,
  });
  if (!judged.ok) throw new HarnessError(judged.motif, sessionId, { ...evidence, kind: judged.kind });
  return {
    sessionId,
    payload: judged.source === 'gate' ? judged.envelope : judged.text,
    source: judged.source,
    tokens: summary.tokens,
    cost: summary.cost,
    model: summary.model,
    seconds,
  };
}
