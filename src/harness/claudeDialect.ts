// Claude Code's dialect, pure: the port's request translated into `claude -p --output-format json` flags and
// environment, and its single JSON result read back into a verdict. No process here, so every rule is
// testable dry; `claude.ts` does the spawning.
import type { FailureKind } from '../contract/errors.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstLine } from '../contract/errors.js';
import { REPORT_TOOL } from '../contract/typedGate.js';
import { addCounts, finiteCost } from '../contract/numbers.js';

/**
 * pi tool names → Claude Code's. Claude Code has no dedicated `find`/`ls` tool: Glob covers both (and dedup
 * keeps it once). The typed gate `report_phase` does not exist there: the envelope travels as text.
 */
export const CLAUDE_TOOLS: Readonly<Record<string, string>> = {
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  bash: 'Bash',
  grep: 'Grep',
  find: 'Glob',
  ls: 'Glob',
};

/**
 * pi's thinking levels → Claude Code's `MAX_THINKING_TOKENS` budget. The steps follow Claude Code's own
 * ladder (think ≈ 4k, think hard ≈ 10k, ultrathink = 31 999); 1 024 is the API's minimum budget. `off` means
 * the variable is removed, so an inherited value cannot switch thinking back on.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number | null>> = {
  off: null,
  minimal: 1024,
  low: 4000,
  medium: 10_000,
  high: 16_000,
  xhigh: 31_999,
};

/** Roster tools in Claude Code's names, order kept, duplicates dropped. An unknown tool is refused, not guessed. */
export function claudeTools(tools: readonly string[]): string[] {
  const out: string[] = [];
  for (const tool of tools) {
    if (tool === REPORT_TOOL) continue;
    const mapped = CLAUDE_TOOLS[tool];
    if (!mapped)
      throw new Error(`tool "${tool}" has no Claude Code equivalent (known: ${Object.keys(CLAUDE_TOOLS).join(', ')})`);
    if (!out.includes(mapped)) out.push(mapped);
  }
  return out;
}

/** Budget for a thinking level: a number, `null` for off, `undefined` when no level was asked. */
export function thinkingBudget(level: string | undefined): number | null | undefined {
  if (level === undefined || level === '') return undefined;
  if (!(level in THINKING_BUDGETS)) {
    throw new Error(`thinking level "${level}" is unknown (known: ${Object.keys(THINKING_BUDGETS).join(', ')})`);
  }
  return THINKING_BUDGETS[level];
}

/** Claude Code knows models by their own id: the provider (and any gateway prefix) is dropped. */
export function claudeModelId(route: string): string {
  const id = route.split('/').at(-1)?.trim() ?? '';
  if (id === '') throw new Error(`model "${route}" names no model id`);
  return id;
}

export interface ClaudeFlags {
  sessionId: string;
  /** Continue the session (`--resume`) instead of opening it under the chosen id (`--session-id`). */
  resume: boolean;
  model?: string;
  tools?: readonly string[];
  maxTurns?: number;
}

/** `claude -p --output-format json …`: the prompt goes on stdin, never in argv. */
export function claudeArgs(flags: ClaudeFlags): string[] {
  const argv = ['-p', '--output-format', 'json'];
  if (flags.model) argv.push('--model', claudeModelId(flags.model));
  const tools = claudeTools(flags.tools ?? []);
  if (tools.length > 0) argv.push('--allowedTools', tools.join(','));
  argv.push(flags.resume ? '--resume' : '--session-id', flags.sessionId);
  if (flags.maxTurns !== undefined) argv.push('--max-turns', String(flags.maxTurns));
  return argv;
}

// ---------- where Claude Code keeps its sessions ----------

/** Claude Code's config folder for this environment (`CLAUDE_CONFIG_DIR`, else `~/.claude`). */
export function claudeConfigDir(env: NodeJS.ProcessEnv): string {
  if (env.CLAUDE_CONFIG_DIR) return path.resolve(env.CLAUDE_CONFIG_DIR);
  return path.join(env.HOME || os.homedir(), '.claude');
}

/** Claude Code files a project's sessions under its cwd with every non-alphanumeric character made a dash. */
export function claudeProjectSlug(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, '-');
}

/**
 * The transcript Claude Code appends to while it works (`projects/<slug>/<session>.jsonl`). Its growth is the
 * only sign of life in json mode (stdout stays empty until the end), and its existence says whether the
 * session can be resumed. The slug folder is tried first, then every project folder (the slug rule may vary).
 */
export function findClaudeTranscript(configDir: string, cwd: string, sessionId: string): string | undefined {
  const projects = path.join(configDir, 'projects');
  const name = `${sessionId}.jsonl`;
  const expected = path.join(projects, claudeProjectSlug(cwd), name);
  if (fs.existsSync(expected)) return expected;
  let dirs: string[];
  try {
    dirs = fs.readdirSync(projects);
  } catch {
    return undefined;
  }
  for (const dir of dirs) {
    const candidate = path.join(projects, dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

// ---------- reading the answer ----------

/** The one object `claude -p --output-format json` prints (fields this adapter reads). */
export interface ClaudeResultMessage {
  type: 'result';
  subtype: string;
  is_error: boolean;
  result?: string;
  errors?: unknown[];
  error?: unknown;
  session_id?: string;
  num_turns?: number;
  total_cost_usd?: number;
  usage?: Record<string, unknown>;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function asResult(value: unknown): ClaudeResultMessage | undefined {
  const object = asObject(value);
  return object?.type === 'result' ? (object as unknown as ClaudeResultMessage) : undefined;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The result object of stdout: the whole output as one object (the documented shape), the last result of an
 * array (what `--verbose` prints), or the last line that is a result (a banner printed before it).
 */
export function readClaudeOutput(stdout: string): ClaudeResultMessage | undefined {
  const whole = tryJson(stdout.trim());
  if (Array.isArray(whole))
    return whole
      .map(asResult)
      .filter((r) => r !== undefined)
      .at(-1);
  const direct = asResult(whole);
  if (direct) return direct;
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = asResult(tryJson(lines[i]!.trim()));
    if (found) return found;
  }
  return undefined;
}

/** Tokens (input + output + cache writes + cache reads) and cost of the call, as Claude Code billed them. */
export function claudeFigures(message: ClaudeResultMessage | undefined): { tokens: number; cost: number } {
  const usage = message?.usage ?? {};
  // Clamped sums: four huge figures must not add up to Infinity.
  const tokens = addCounts(
    addCounts(usage.input_tokens, usage.output_tokens),
    addCounts(usage.cache_creation_input_tokens, usage.cache_read_input_tokens),
  );
  return { tokens, cost: finiteCost(message?.total_cost_usd) };
}

function errorText(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = asObject(value);
  if (object && typeof object.message === 'string') return object.message;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/** What stdout's JSON says went wrong: `result`, else `errors`, else `error`, else `message`. */
export function stdoutEvidence(value: unknown): string {
  const object = asObject(value);
  if (!object) return '';
  if (typeof object.result === 'string' && object.result.trim()) return firstLine(object.result);
  if (Array.isArray(object.errors) && object.errors.length > 0)
    return firstLine(object.errors.map(errorText).join('; '));
  for (const key of ['error', 'message']) {
    const text = errorText(object[key]).trim();
    if (text) return firstLine(text);
  }
  return '';
}

/**
 * The line of stderr that says why. Claude Code writes warnings there (`Ignoring …`) that are never the cause,
 * and Node crashes end with stack frames: an error line wins, else the last meaningful line.
 */
export function stderrEvidence(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Ignoring ') && !l.startsWith('at '));
  const error = lines.find((l) => /error/i.test(l));
  return firstLine(error ?? lines.at(-1) ?? '');
}

export interface ClaudeOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The session transcript appeared: Claude Code got as far as the conversation. */
  started: boolean;
  /** How the command is shown in motifs. */
  display: string;
}

export type ClaudeVerdict =
  | { ok: true; text: string; message: ClaudeResultMessage }
  | { ok: false; kind: FailureKind; motif: string; message?: ClaudeResultMessage };

const SESSION_TROUBLE = /no conversation found with session id|session id .* is already in use/i;

/**
 * The verdict on one `claude -p` call, in this order: the result object is the evidence (Claude Code writes
 * its error into it, whatever the exit code); a session it cannot find or reuse is a resume problem; a turn or
 * budget stop is a tripped limit; an API-level failure (`is_error` with subtype success: auth, usage, outage)
 * is a model error, so the provider-outage fallback can judge it; then the exit code; then the text.
 * Without a result object: stderr (warnings skipped) says why, and whether Claude Code started at all.
 */
export function judgeClaude(outcome: ClaudeOutcome): ClaudeVerdict {
  const message = readClaudeOutput(outcome.stdout);
  const how = outcome.exitCode !== null ? `exit ${outcome.exitCode}` : `signal ${outcome.signal ?? 'unknown'}`;
  if (message) {
    const evidence = stdoutEvidence(message) || message.subtype || 'no reason given';
    const fail = (kind: FailureKind, motif: string): ClaudeVerdict => ({ ok: false, kind, motif, message });
    if (SESSION_TROUBLE.test(evidence)) return fail('resume', `claude cannot continue the session: ${evidence}`);
    if (message.subtype === 'error_max_turns')
      return fail('guard', `claude stopped at its turn limit (${message.num_turns ?? '?'} turns)`);
    if (message.subtype === 'error_max_budget_usd')
      return fail('guard', `claude stopped at its budget limit: ${evidence}`);
    if (message.subtype === 'success' && message.is_error) return fail('model_error', `model error: ${evidence}`);
    if (message.subtype !== 'success' || message.is_error)
      return fail('exit', `claude failed (${message.subtype}): ${evidence}`);
    if (outcome.exitCode !== 0) return fail('exit', `claude ended with ${how} after a successful result`);
    const text = typeof message.result === 'string' ? message.result : '';
    if (text.trim() === '') return fail('empty', 'the agent answered with neither an envelope nor any text');
    return { ok: true, text, message };
  }
  const why = stdoutEvidence(tryJson(outcome.stdout.trim())) || stderrEvidence(outcome.stderr);
  if (outcome.exitCode === 0) {
    const seen = firstLine(outcome.stdout, 120);
    return {
      ok: false,
      kind: 'protocol',
      motif: `claude printed no JSON result (--output-format json)${seen ? `: ${seen}` : ': stdout was empty'}`,
    };
  }
  if (outcome.started) return { ok: false, kind: 'exit', motif: `claude died (${how}): ${why || 'no error message'}` };
  return {
    ok: false,
    kind: 'spawn',
    motif: `claude did not start (${outcome.display}, ${how}): ${why || 'no error message'}`,
  };
}
