// The claude adapter against a RECORDED-OUTPUT STAND-IN (test/fixtures/claude/claude-standin.mjs): the real
// `claude` needs an Anthropic account, which this machine has not. The stand-in parses flags, reads stdin and
// keeps session transcripts like the real CLI, and plays recorded result objects (see its README). Every call
// goes through the real adapter: supervised spawn, ledger, watchdog, verdict.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Envelope, parse } from '../../src/envelope/envelopes.js';
import { HarnessError } from '../../src/contract/errors.js';
import { createClaudeHarness } from '../../src/harness/claude.js';
import {
  claudeArgs,
  claudeModelId,
  claudeTools,
  judgeClaude,
  stderrEvidence,
  thinkingBudget,
} from '../../src/harness/claudeDialect.js';
import type { HarnessRequest } from '../../src/harness/types.js';
import { readLedger } from '../../src/trace/ledger.js';
import { workspacePaths, type WorkspacePaths } from '../../src/config/paths.js';
import { processesTagged } from '../helpers/factory.js';

const STANDIN = path.resolve(import.meta.dirname, '../fixtures/claude/claude-standin.mjs');
const PROMPT = 'Add slugify to src/text.ts.\n--not-a-flag "quoted" and a secret-looking line';

interface StandinCall {
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
}

let root: string;
let cwd: string;
let configDir: string;
let logFile: string;
let workspace: WorkspacePaths;
let adwCounter = 0;

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'factory-claude-')));
  cwd = path.join(root, 'repo');
  configDir = path.join(root, 'claude-config');
  logFile = path.join(root, 'standin.jsonl');
  fs.mkdirSync(cwd);
  workspace = workspacePaths(cwd);
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function calls(): StandinCall[] {
  if (!fs.existsSync(logFile)) return [];
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StandinCall);
}

function request(tape: string, over: Partial<HarnessRequest> = {}, extraEnv: NodeJS.ProcessEnv = {}): HarnessRequest {
  adwCounter += 1;
  return {
    prompt: PROMPT,
    cwd,
    workspace,
    model: 'anthropic/claude-sonnet-4-5',
    thinking: 'medium',
    tools: ['read', 'bash', 'find', 'ls', 'report_phase', 'bash', 'edit'],
    envelopeSchema: { title: 'Envelope', schema: {} },
    identity: { adwId: `c1a0de${String(adwCounter).padStart(2, '0')}`, phase: 'build', role: 'builder' },
    timeoutMs: 30_000,
    idleTimeoutMs: 10_000,
    env: {
      ...process.env,
      CLAUDE_CONFIG_DIR: configDir,
      FACTORY_CLAUDE_STANDIN_TAPE: tape,
      FACTORY_CLAUDE_STANDIN_LOG: logFile,
      ...extraEnv,
    },
    ...over,
  };
}

async function failure(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HarnessError);
  const harnessError = error as HarnessError;
  expect(harnessError.message).not.toContain('\n');
  return harnessError;
}

const harness = createClaudeHarness({ command: STANDIN });

describe('claude adapter (recorded-output stand-in: the real claude needs an account)', () => {
  it('answers through the text path: one session chosen before the call, figures from the JSON', async () => {
    const req = request('success');
    const usage: { tokens: number; cost: number }[] = [];
    const result = await harness.run({ ...req, onUsage: (u) => usage.push(u) });

    expect(result.source).toBe('text');
    expect(parse(result.payload, Envelope)).toMatchObject({
      status: 'success',
      summary: 'slugify added in src/text.ts, with a test',
    });
    expect(result.tokens).toBe(12 + 1406 + 9231 + 48112);
    expect(result.cost).toBeCloseTo(0.0874215, 9);
    expect(result.model).toBe('anthropic/claude-sonnet-4-5');
    expect(usage).toEqual([{ tokens: result.tokens, cost: result.cost }]);

    const [call] = calls();
    expect(call!.argv).toEqual([
      '-p',
      '--output-format',
      'json',
      '--model',
      'claude-sonnet-4-5',
      '--allowedTools',
      'Read,Bash,Glob,Edit',
      '--session-id',
      result.sessionId,
    ]);
    expect(call!.argv.join(' ')).not.toContain('slugify');
    expect(call!.stdin).toBe(PROMPT);
    expect(call!.cwd).toBe(cwd);
    expect(call!.env).toMatchObject({
      MAX_THINKING_TOKENS: '10000',
      FACTORY_RUN_TAG: req.identity.adwId,
      FACTORY_PHASE: 'build',
    });

    const ledger = readLedger(workspace.ledgerFile);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({
      session_id: result.sessionId,
      cwd,
      model: 'anthropic/claude-sonnet-4-5',
      phase: 'build',
      adw_id: req.identity.adwId,
    });
    expect(processesTagged(req.identity.adwId)).toEqual([]);
  });

  it('continues the same session with --resume on a retry; thinking off removes an inherited budget', async () => {
    const first = await harness.run(request('success'));
    const retry = await harness.run(
      request(
        'success',
        { sessionId: first.sessionId, thinking: 'off', tools: ['read'], model: undefined, limits: { maxTurns: 12 } },
        { MAX_THINKING_TOKENS: '8000' },
      ),
    );
    expect(retry.sessionId).toBe(first.sessionId);
    const second = calls()[1]!;
    expect(second.argv).toEqual([
      '-p',
      '--output-format',
      'json',
      '--allowedTools',
      'Read',
      '--resume',
      first.sessionId,
      '--max-turns',
      '12',
    ]);
    expect(second.argv).not.toContain('--session-id');
    expect(second.env.MAX_THINKING_TOKENS).toBeUndefined();
    expect(readLedger(workspace.ledgerFile).map((e) => e.session_id)).toEqual([first.sessionId, first.sessionId]);
  });

  it('declares the new id when an older CLI answers a resume under another session', async () => {
    const first = await harness.run(request('success'));
    const retry = await harness.run(request('success,resume-forks', { sessionId: first.sessionId }));
    expect(calls()[1]!.argv.slice(-2)).toEqual(['--resume', first.sessionId]);
    expect(retry.sessionId).toBe('4f5e6d7c-8b9a-4c0d-9e1f-2a3b4c5d6e7f');
    const last = readLedger(workspace.ledgerFile).at(-1)!;
    expect(last).toMatchObject({ session_id: retry.sessionId, cwd, phase: 'build' });
    expect(last.reason).toContain(first.sessionId);
  });

  it('opens a chosen id that Claude Code never recorded with --session-id, not a --resume that would fail', async () => {
    const chosen = '0b9f6c2e-4d1a-4e3b-9c8d-7a6f5e4d3c2b';
    const result = await harness.run(request('success', { sessionId: chosen }));
    expect(result.sessionId).toBe(chosen);
    expect(calls()[0]!.argv.slice(-2)).toEqual(['--session-id', chosen]);
  });

  it('is_error with exit 0 is a failure, with the reason from the JSON', async () => {
    const req = request('is-error-exit0');
    const error = await failure(harness.run(req));
    expect(error.message).toBe('model error: Invalid API key · Please run /login');
    expect(error.evidence.kind).toBe('model_error');
    expect(error.sessionId).toBe(calls()[0]!.argv.at(-1));
    expect(readLedger(workspace.ledgerFile)[0]!.session_id).toBe(error.sessionId);
  });

  it('exit 1 with a valid result: the JSON result is the evidence, not the exit code', async () => {
    const error = await failure(harness.run(request('exit1-valid-json')));
    expect(error.message).toBe("model error: You're out of extra usage · resets 4am (UTC)");
    expect(error.evidence).toMatchObject({ tokens: 0, cost: 0, kind: 'model_error' });
  });

  it('warnings on stderr never hide the reason: JSON first, then the real stderr line', async () => {
    const refused = await failure(harness.run(request('model-refused-warned')));
    expect(refused.message).toContain("There's an issue with the selected model (claude-nope-9)");
    expect(refused.message).not.toContain('Ignoring');
    expect(refused.evidence.stderrTail).toContain('Ignoring 2 permissions.allow entries');

    const startup = await failure(harness.run(request('startup-failure-warned')));
    expect(startup.evidence.kind).toBe('spawn');
    expect(startup.message).toContain('Error: Invalid settings in .claude/settings.json: permissions.defaultMode');
    expect(startup.message).not.toContain('Ignoring');

    const warned = await harness.run(request('success-warned'));
    expect(parse(warned.payload, Envelope).status).toBe('success');
  });

  it('garbage on stdout is refused in one line', async () => {
    const error = await failure(harness.run(request('garbage')));
    expect(error.evidence.kind).toBe('protocol');
    expect(error.message).toMatch(/^claude printed no JSON result \(--output-format json\): ✻ Welcome to Claude Code!/);
  });

  it('a turn-limit stop is a tripped guard, with the figures already spent', async () => {
    const error = await failure(harness.run(request('max-turns')));
    expect(error.evidence).toMatchObject({ kind: 'guard', tokens: 21 + 980 + 3100 + 22040, cost: 0.0412 });
    expect(error.message).toBe('claude stopped at its turn limit (7 turns)');
  });

  it('a session Claude Code cannot find is a resume problem, carrying the asked id', async () => {
    const chosen = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    const error = await failure(harness.run(request('resume-miss', { sessionId: chosen })));
    expect(error.evidence.kind).toBe('resume');
    expect(error.sessionId).toBe(chosen);
    expect(error.message).toMatch(/^claude cannot continue the session: No conversation found with session ID/);
  });

  it('the idle watchdog ends a silent claude; its process group is gone', async () => {
    const req = request('hang', { idleTimeoutMs: 600 });
    const error = await failure(harness.run(req));
    expect(error.evidence.kind).toBe('stalled');
    expect(error.message).toContain('no progress from claude');
    expect(error.sessionId).toBe(calls()[0]!.argv.at(-1));
    expect(processesTagged(req.identity.adwId)).toEqual([]);
  });

  it('a long call whose transcript keeps growing is not mistaken for a hang', async () => {
    // ~2 s of work, transcript lines every 100 ms, stdout silent until the end; idle window 1 s.
    const result = await harness.run(request('slow', { idleTimeoutMs: 1000 }));
    expect(result.seconds).toBeGreaterThan(1);
    expect(parse(result.payload, Envelope).status).toBe('success');
  });

  it('an abort ends the call and its process group', async () => {
    const controller = new AbortController();
    const req = request('hang', { signal: controller.signal });
    const pending = harness.run(req);
    while (calls().length === 0) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const error = await failure(pending);
    expect(error.evidence.kind).toBe('aborted');
    expect(processesTagged(req.identity.adwId)).toEqual([]);
  });

  it('a provider outage falls back once, in the same session, figures summed', async () => {
    const req = request('outage,success', {
      model: 'anthropic/claude-opus-4-1',
      fallbackModel: 'anthropic/claude-sonnet-4-5',
    });
    const result = await harness.run(req);
    expect(result.model).toBe('anthropic/claude-sonnet-4-5');
    expect(result.fallback).toMatchObject({ from: 'anthropic/claude-opus-4-1' });
    expect(result.tokens).toBe(6 + 350 + 2048 + 4096 + (12 + 1406 + 9231 + 48112));
    expect(result.cost).toBeCloseTo(0.0123 + 0.0874215, 9);
    const [first, relay] = calls();
    const id = first!.argv.at(-1)!;
    expect(first!.argv).toContain('claude-opus-4-1');
    expect(relay!.argv.slice(-2)).toEqual(['--resume', id]);
    expect(relay!.argv).toContain('claude-sonnet-4-5');
    expect(relay!.stdin).toContain('continue the same mission');
    expect(readLedger(workspace.ledgerFile).map((e) => [e.session_id, e.reason])).toEqual([
      [id, undefined],
      [id, 'fallback'],
    ]);
  });

  it('refuses a resume from another folder before any call', async () => {
    const first = await harness.run(request('success'));
    const elsewhere = path.join(root, 'elsewhere');
    fs.mkdirSync(elsewhere);
    const error = await failure(harness.run(request('success', { sessionId: first.sessionId, cwd: elsewhere })));
    expect(error.evidence.kind).toBe('resume');
    expect(calls()).toHaveLength(1);
  });

  it('a roster Claude Code cannot honour is refused before the ledger; a missing executable is a spawn failure', async () => {
    const unknownTool = await failure(harness.run(request('success', { tools: ['read', 'web_fetch'] })));
    expect(unknownTool.evidence.kind).toBe('spawn');
    expect(unknownTool.message).toContain('tool "web_fetch" has no Claude Code equivalent');
    const unknownLevel = await failure(harness.run(request('success', { thinking: 'extreme' })));
    expect(unknownLevel.message).toContain('thinking level "extreme" is unknown');
    expect(calls()).toHaveLength(0);
    expect(readLedger(workspace.ledgerFile)).toHaveLength(0);

    const missing = createClaudeHarness({ command: path.join(root, 'no-such-claude') });
    const error = await failure(missing.run(request('success')));
    expect(error.evidence.kind).toBe('spawn');
    expect(error.message).toMatch(/^claude could not start \(.*no-such-claude\): .*ENOENT/);
  });
});

describe('claude dialect (pure)', () => {
  it('maps and dedupes tools, drops the typed gate', () => {
    expect(claudeTools(['read', 'write', 'edit', 'bash', 'grep', 'find', 'ls', 'report_phase'])).toEqual([
      'Read',
      'Write',
      'Edit',
      'Bash',
      'Grep',
      'Glob',
    ]);
    expect(claudeTools(['report_phase'])).toEqual([]);
  });

  it('translates thinking levels to budgets; off is "unset"', () => {
    expect([undefined, 'off', 'minimal', 'low', 'medium', 'high', 'xhigh'].map(thinkingBudget)).toEqual([
      undefined,
      null,
      1024,
      4000,
      10_000,
      16_000,
      31_999,
    ]);
  });

  it('drops provider and gateway prefixes from model routes', () => {
    expect(claudeModelId('openrouter/anthropic/claude-sonnet-4-5')).toBe('claude-sonnet-4-5');
    expect(claudeModelId('sonnet')).toBe('sonnet');
    expect(() => claudeModelId('anthropic/')).toThrow(/names no model id/);
  });

  it('never leaves the tools flag empty', () => {
    expect(claudeArgs({ sessionId: 'x', resume: false, tools: ['report_phase'] })).toEqual([
      '-p',
      '--output-format',
      'json',
      '--session-id',
      'x',
    ]);
  });

  it('skips Ignoring warnings and stack frames in stderr evidence', () => {
    expect(stderrEvidence('Ignoring 1 entry\nTypeError: boom\n    at x (cli.js:1:1)\n')).toBe('TypeError: boom');
    expect(stderrEvidence('Ignoring 1 entry\n')).toBe('');
  });

  it('reads the result of a --verbose array and a result after a banner', () => {
    const result = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'ok',
      usage: { input_tokens: 1, output_tokens: 2 },
    };
    const base = { stderr: '', exitCode: 0, signal: null, started: true, display: 'claude' };
    expect(
      judgeClaude({ ...base, stdout: JSON.stringify([{ type: 'system', subtype: 'init' }, result]) }),
    ).toMatchObject({ ok: true, text: 'ok' });
    expect(judgeClaude({ ...base, stdout: `banner line\n${JSON.stringify(result)}\n` })).toMatchObject({
      ok: true,
      text: 'ok',
    });
    expect(judgeClaude({ ...base, stdout: JSON.stringify({ ...result, result: '  ' }) })).toMatchObject({
      ok: false,
      kind: 'empty',
    });
    expect(judgeClaude({ ...base, exitCode: 1, stdout: JSON.stringify(result) })).toMatchObject({
      ok: false,
      kind: 'exit',
    });
  });
});
