// The claude adapter: one `claude -p --output-format json` process per attempt, behind the same port as pi.
// The prompt goes on stdin; Claude Code prints one JSON object at the end, judged by the pure dialect module.
//
// Session rule. The port chooses the session id before the call, so that every error (a timeout included)
// carries it, the ledger line written before the spawn names it, and a retry or a resume after a crash
// continues it. Claude Code names its own sessions unless told: a new session is opened with
// `--session-id <the chosen uuid>`, and a session whose transcript exists is continued with `--resume <id>`.
// Whether the transcript exists (not whether the ledger knows the id) decides: an attempt that died before
// Claude Code wrote anything leaves nothing to resume, and `--resume` would then fail.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HarnessError, errorMessage, type FailureKind } from '../contract/errors.js';
import { declareSession } from '../trace/ledger.js';
import { guardAttempt } from '../pi/guards.js';
import { launchAgent, StderrTail } from '../pi/launch.js';
import {
  claudeArgs,
  claudeConfigDir,
  claudeFigures,
  findClaudeTranscript,
  judgeClaude,
  thinkingBudget,
} from './claudeDialect.js';
import { withFallback } from './fallback.js';
import type { Harness, HarnessRequest, HarnessResult } from './types.js';

/** The answer is one JSON object; far more than this on stdout is not that object (and must not fill memory). */
const STDOUT_LIMIT_BYTES = 32 * 1024 * 1024;

export interface ClaudeHarnessOptions {
  /** Executable to run (default: `FACTORY_CLAUDE`, else `claude` on PATH). */
  command?: string;
}

export function createClaudeHarness(opts: ClaudeHarnessOptions = {}): Harness {
  const command = opts.command ?? process.env.FACTORY_CLAUDE ?? 'claude';
  return {
    name: 'claude',
    run: (request) => withFallback(request, (r, reason) => runClaudeAttempt(command, r, reason)),
  };
}

/** Environment of the call: identity for hooks and traces, and the thinking budget (off removes it). */
export function claudeEnv(request: HarnessRequest): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...(request.env ?? process.env),
    FACTORY_PHASE: request.identity.phase,
    FACTORY_ROLE: request.identity.role,
    FACTORY_ADW_ID: request.identity.adwId,
    FACTORY_DATA_DIR: request.workspace.dataDir,
  };
  const budget = thinkingBudget(request.thinking);
  if (budget === null) delete env.MAX_THINKING_TOKENS;
  else if (budget !== undefined) env.MAX_THINKING_TOKENS = String(budget);
  return env;
}

function fileSize(file: string | undefined): number {
  if (!file) return -1;
  try {
    return fs.statSync(file).size;
  } catch {
    return -1;
  }
}

/** One claude process. `reason` names why this start exists beyond the first (e.g. "fallback"), for the ledger. */
export async function runClaudeAttempt(
  command: string,
  request: HarnessRequest,
  reason?: string,
): Promise<HarnessResult> {
  const paths = request.workspace;
  const sessionId = request.sessionId ?? randomUUID();
  const cwd = path.resolve(request.cwd);
  const configDir = claudeConfigDir(request.env ?? process.env);
  let transcript: string | undefined;
  const started = performance.now();
  const proc = launchAgent(
    { ...request, agent: 'claude', sessionId, cwd, reason, runTag: request.identity.adwId },
    // Translate first: a roster Claude Code cannot honour is refused before the ledger or any token.
    () => {
      transcript = findClaudeTranscript(configDir, cwd, sessionId);
      try {
        const env = claudeEnv(request);
        const argv = claudeArgs({
          sessionId,
          resume: transcript !== undefined,
          model: request.model,
          tools: request.tools,
          maxTurns: request.limits?.maxTurns,
        });
        return { command, argv, env };
      } catch (error) {
        throw new HarnessError(`claude not started: ${errorMessage(error)}`, sessionId, { kind: 'spawn' });
      }
    },
  );
  request.onActivity?.({
    kind: 'note',
    text: `claude ${transcript ? 'resumes' : 'opens'} session ${sessionId.slice(0, 8)} — json mode: figures come with the result`,
  });

  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  const stderr = new StderrTail();
  let spawnError: Error | undefined;
  let stopped: { motif: string; kind: FailureKind } | undefined;
  const stop = (motif: string, kind: FailureKind) => {
    if (stopped) return;
    stopped = { motif, kind };
    void proc.kill();
  };

  // json mode prints nothing until the end: the transcript's growth is the sign of life the watchdog needs.
  let transcriptSize = fileSize(transcript);
  let transcriptMoved = false;
  let lastProgress = performance.now();
  const idleSeconds = Math.round(request.idleTimeoutMs / 1000);
  const pollMs = Math.max(50, Math.min(1000, Math.floor(request.idleTimeoutMs / 4)));
  const watchdog = setInterval(() => {
    transcript ??= findClaudeTranscript(configDir, cwd, sessionId);
    const size = fileSize(transcript);
    if (size !== transcriptSize) {
      transcriptSize = size;
      transcriptMoved = true;
      lastProgress = performance.now();
    } else if (performance.now() - lastProgress > request.idleTimeoutMs) {
      stop(
        `no progress from claude for ${idleSeconds} s (no output, session transcript silent) — watchdog ended it`,
        'stalled',
      );
    }
  }, pollMs);
  const guard = guardAttempt(request, stop);

  proc.child.on('error', (error) => {
    spawnError = error;
  });
  proc.child.stdout.on('data', (chunk: Buffer) => {
    lastProgress = performance.now();
    stdoutBytes += chunk.length;
    if (stdoutBytes > STDOUT_LIMIT_BYTES) {
      stop(
        `claude printed more than ${STDOUT_LIMIT_BYTES / 1024 / 1024} MB on stdout — not the single JSON result expected`,
        'protocol',
      );
      return;
    }
    stdout.push(chunk);
  });
  proc.child.stderr.on('data', (chunk: Buffer) => {
    lastProgress = performance.now();
    stderr.push(chunk);
  });
  // An early death closes stdin under our feet; the exit below reports it.
  proc.child.stdin.on('error', () => {});
  proc.child.stdin.end(request.prompt, 'utf8');

  const stdoutDone = new Promise<void>((resolve) => proc.child.stdout.once('close', () => resolve()));
  const exit = await proc.exited;
  await Promise.race([stdoutDone, new Promise((r) => setTimeout(r, 2000).unref())]);
  clearInterval(watchdog);
  guard.disarm();
  const stderrTail = stderr.text;
  const seconds = (performance.now() - started) / 1000;

  if (spawnError) {
    throw new HarnessError(`claude could not start (${command}): ${spawnError.message}`, sessionId, {
      stderrTail,
      kind: 'spawn',
    });
  }
  // A stopped call printed no result: its figures are unknown (Claude Code reports them only at the end).
  if (stopped) throw new HarnessError(stopped.motif, sessionId, { tokens: 0, cost: 0, stderrTail, kind: stopped.kind });

  const judged = judgeClaude({
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: stderrTail,
    exitCode: exit.code,
    signal: exit.signal,
    started: transcriptMoved || fileSize(findClaudeTranscript(configDir, cwd, sessionId)) !== transcriptSize,
    display: command,
  });
  const figures = claudeFigures(judged.message);
  if (figures.tokens > 0 || figures.cost > 0) request.onUsage?.(figures);
  if (!judged.ok) throw new HarnessError(judged.motif, sessionId, { ...figures, stderrTail, kind: judged.kind });

  // Claude Code versions that fork a session on resume answer under a new id: declare it, so a later
  // resume (from the ledger) finds the session that holds this answer.
  const reported = judged.message.session_id;
  let finalId = sessionId;
  if (typeof reported === 'string' && reported !== '' && reported !== sessionId) {
    declareSession(paths.ledgerFile, {
      sessionId: reported,
      cwd,
      model: request.model,
      phase: request.identity.phase,
      adwId: request.identity.adwId,
      reason: `claude answered under a new id (asked ${sessionId})`,
    });
    finalId = reported;
  }
  return {
    sessionId: finalId,
    payload: judged.text,
    source: 'text',
    tokens: figures.tokens,
    cost: figures.cost,
    model: request.model,
    seconds,
  };
}
