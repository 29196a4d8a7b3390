// factory-obs: the harness trace. One JSONL file per session at
// `$FACTORY_DATA_DIR/traces/harness/<session_id>.jsonl` (fallback `<cwd>/adws/adw_data/traces/harness/`),
// one line per session start/shutdown, tool start/end, message end and compaction, each stamped with
// the phase identity the core put in the environment. The core ingests these files into its trace
// store; the file is append-only and a failure to write is swallowed: observing must never break pi.
//
// Secrets: every record is masked before it is written, with the cockpit's own redactor (.pi/lib/redact.ts), fed
// with what the node can know by itself: the credential-named variables of its env and every value of the
// project's `.env`. With a closed vault the `.env` values this agent was denied are not in its env, yet the agent
// can still `cat .env` and echo them; reading `.env` here gives the node nothing the agent could not read. The
// cockpit never sends the node a list of values (the agent runs as the same user and would read it too): what
// only the cockpit knows (credentials of its real environment) it masks itself, when it ingests these files and
// when it rewrites them at the close of the run.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent';
import { parseDotEnv, secretsOf } from '../lib/dotenv.js';
import { createRedactor, redactDeep, type Redactor } from '../lib/redact.js';
import { joinSocle } from '../lib/socle.js';

export const EXTENSION_NAME = 'factory-obs';
/** Long tool arguments (a whole file given to `write`) are cut in the trace, never in pi. */
export const ARG_PREVIEW_CHARS = 500;

export interface Identity {
  phase: string | null;
  role: string | null;
  adw_id: string | null;
}

export interface TraceRecord extends Identity {
  ts: string;
  type: string;
  session_id: string;
  [field: string]: unknown;
}

export function identityFrom(env: NodeJS.ProcessEnv): Identity {
  return { phase: env.FACTORY_PHASE || null, role: env.FACTORY_ROLE || null, adw_id: env.FACTORY_ADW_ID || null };
}

export function traceDir(env: NodeJS.ProcessEnv, cwd: string): string {
  const dataDir = env.FACTORY_DATA_DIR ? path.resolve(env.FACTORY_DATA_DIR) : path.join(cwd, 'adws', 'adw_data');
  return path.join(dataDir, 'traces', 'harness');
}

/** The session's file; an id is reduced to file-name-safe characters (pi's ids already are). */
export function tracePath(dir: string, sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown-session';
  return path.join(dir, `${safe}.jsonl`);
}

export function traceRecord(
  type: string,
  sessionId: string,
  identity: Identity,
  fields: Record<string, unknown> = {},
  now = new Date(),
): TraceRecord {
  return { ts: now.toISOString(), type, session_id: sessionId, ...identity, ...fields };
}

/** Tool arguments with every string longer than the preview cut, so a trace line stays small. */
export function previewArgs(args: unknown): unknown {
  if (typeof args === 'string') {
    return args.length > ARG_PREVIEW_CHARS ? `${args.slice(0, ARG_PREVIEW_CHARS)}… [${args.length} chars]` : args;
  }
  if (Array.isArray(args)) return args.map(previewArgs);
  if (args && typeof args === 'object') {
    return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, previewArgs(value)]));
  }
  return args;
}

/** The fields of a `message_end` worth keeping: who spoke, what it cost, how it stopped. */
export function messageFields(message: unknown): Record<string, unknown> {
  const m = (message ?? {}) as Record<string, unknown>;
  // `role` is taken by the phase identity (FACTORY_ROLE): the speaker is `message_role`.
  const fields: Record<string, unknown> = { message_role: m.role ?? null };
  if (m.role === 'assistant') {
    fields.usage = m.usage ?? null;
    fields.stop_reason = m.stopReason ?? null;
    fields.model = m.provider && m.model ? `${String(m.provider)}/${String(m.model)}` : (m.model ?? null);
    if (m.errorMessage) fields.error_message = m.errorMessage;
  }
  if (m.role === 'toolResult') {
    fields.tool_name = m.toolName ?? null;
    fields.is_error = m.isError ?? false;
  }
  return fields;
}

/** The values of the project's `.env` (none when there is no such file or it cannot be read). */
export function dotEnvValuesIn(cwd: string): Record<string, string> {
  try {
    return parseDotEnv(readFileSync(path.join(cwd, '.env'), 'utf8')).values;
  } catch {
    return {};
  }
}

/** The node's redactor: every `.env` value and every credential-named variable of `env`, masked by name. */
export function nodeRedactor(env: NodeJS.ProcessEnv, cwd: string): Redactor {
  return createRedactor(secretsOf(dotEnvValuesIn(cwd), env));
}

/** Append one masked line; returns false instead of throwing when the disk says no. */
export function appendTrace(file: string, record: TraceRecord, redact: Redactor = (text) => text): boolean {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    // The record's strings are masked, not its serialized text: a numeric secret must not eat into a number.
    appendFileSync(file, `${JSON.stringify(redactDeep(redact, record))}\n`, 'utf8');
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------

type Ctx = { cwd: string; sessionManager: { getSessionId(): string } };

export default function factoryObs(pi: ExtensionAPI): void {
  const identity = identityFrom(process.env);
  // Per project folder, built at its first record (pi's cwd does not change within a node, but ctx says).
  const redactors = new Map<string, Redactor>();
  const redactorFor = (cwd: string): Redactor => {
    let redact = redactors.get(cwd);
    if (!redact) {
      redact = nodeRedactor(process.env, cwd);
      redactors.set(cwd, redact);
    }
    return redact;
  };

  const write = (ctx: Ctx, type: string, fields: () => Record<string, unknown>): void => {
    try {
      const sessionId = ctx.sessionManager.getSessionId();
      appendTrace(
        tracePath(traceDir(process.env, ctx.cwd), sessionId),
        traceRecord(type, sessionId, identity, fields()),
        redactorFor(ctx.cwd),
      );
    } catch {
      // An event shape we did not expect must not surface in pi as an extension error.
    }
  };

  pi.on('session_start', (event, ctx) => write(ctx, 'session_start', () => ({ reason: event.reason })));
  pi.on('session_shutdown', (event, ctx) => write(ctx, 'session_shutdown', () => ({ reason: event.reason })));
  pi.on('tool_execution_start', (event, ctx) =>
    write(ctx, 'tool_start', () => ({
      tool_call_id: event.toolCallId,
      tool_name: event.toolName,
      args: previewArgs(event.args),
    })),
  );
  pi.on('tool_execution_end', (event, ctx) =>
    write(ctx, 'tool_end', () => ({
      tool_call_id: event.toolCallId,
      tool_name: event.toolName,
      is_error: event.isError,
    })),
  );
  pi.on('message_end', (event, ctx) => write(ctx, 'message_end', () => messageFields(event.message)));
  pi.on('session_compact', (event, ctx) =>
    write(ctx, 'compaction', () => ({
      reason: event.reason,
      from_extension: event.fromExtension,
      tokens_before: (event.compactionEntry as { tokensBefore?: number } | undefined)?.tokensBefore ?? null,
    })),
  );
  pi.on('session_compact_failed', (event, ctx) =>
    write(ctx, 'compaction_failed', () => ({
      reason: event.reason,
      aborted: event.aborted ?? false,
      error_message: event.errorMessage ?? null,
    })),
  );

  joinSocle(EXTENSION_NAME);
}
