// The pi adapter: one `pi -p --mode json` process per attempt. The prompt goes on stdin; stdout is read
// incrementally (a huge tool output must never be buffered whole) by the pure reader, then judged by the pure
// verdict. Every failure is a HarnessError carrying the session id chosen before the call.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { HarnessError, type FailureKind } from '../contract/errors.js';
import { guardAttempt, idleMotif } from '../pi/guards.js';
import { launchPi, StderrTail } from '../pi/launch.js';
import { LineSplitter } from '../pi/lines.js';
import { TurnObserver } from '../pi/stream.js';
import { verdict } from '../pi/verdict.js';
import { diagnoseStartFailure, PI_MIN_VERSION, type PiCommand } from '../pi/resolve.js';
import { withFallback } from './fallback.js';
import { SOCLE, type HarnessRequest, type HarnessResult, type LiveHarness } from './types.js';

function lastLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1) ?? ''
  );
}

export function createPiHarness(pi: PiCommand): LiveHarness {
  return {
    name: 'pi',
    run: (request) => withFallback(request, (r, reason) => runPiAttempt(pi, r, reason)),
    // Loaded on first use: a json-mode run never pays for the RPC client.
    openSession: async (request) => (await import('./piSession.js')).openPiSession(pi, request),
  };
}

/** One pi process. `reason` names why this start exists beyond the first (e.g. "fallback"), for the ledger. */
export async function runPiAttempt(pi: PiCommand, request: HarnessRequest, reason?: string): Promise<HarnessResult> {
  const paths = request.workspace;
  const sessionId = request.sessionId ?? randomUUID();
  const cwd = path.resolve(request.cwd);
  const started = performance.now();
  const proc = launchPi({
    ...request,
    pi,
    mode: 'json',
    cwd,
    reason,
    runTag: request.identity.adwId,
    flags: {
      sessionId,
      sessionDir: paths.sessionsDir,
      model: request.model,
      thinking: request.thinking,
      tools: request.tools,
    },
  });

  const splitter = new LineSplitter();
  const observer = new TurnObserver(request);
  const reader = observer.reader;
  const stderr = new StderrTail();
  let spawnError: Error | undefined;
  let stopped: { motif: string; kind: FailureKind } | undefined;

  const stop = (motif: string, kind: FailureKind) => {
    if (stopped) return;
    stopped = { motif, kind };
    void proc.kill();
  };
  const feed = (lines: string[]) => {
    for (const line of lines) observer.take(line);
  };

  const guard = guardAttempt(
    { ...request, idle: { ms: request.idleTimeoutMs, motif: idleMotif(request.idleTimeoutMs, 'it') } },
    stop,
  );

  proc.child.on('error', (error) => {
    spawnError = error;
  });
  proc.child.stdout.on('data', (chunk: Buffer) => {
    guard.progress();
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
  guard.disarm();

  const summary = reader.summary;
  const seconds = (performance.now() - started) / 1000;
  const evidence = { tokens: summary.tokens, cost: summary.cost, stderrTail: stderr.text };
  if (spawnError) {
    throw new HarnessError(`pi could not start (${pi.display}): ${spawnError.message}`, sessionId, {
      ...evidence,
      kind: 'spawn',
    });
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
