import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStream, type StreamSummary } from '../../src/pi/stream.js';
import { compareVersions } from '../../src/pi/resolve.js';
import { verdict, type VerdictContext } from '../../src/pi/verdict.js';

const SOCLE = ['factory-report', 'factory-inventory', 'damage-control', 'factory-obs', 'factory-guard'];

/** A recorded stream: pi 0.85.1 (test/fixtures/pi, the floor) or pi 1.6.0 (test/fixtures/pi-1.6, the ceiling). */
function captured(name: string, dir: 'pi' | 'pi-1.6' = 'pi'): StreamSummary {
  return readStream(readFileSync(new URL(`../fixtures/${dir}/${name}.jsonl`, import.meta.url), 'utf8').split('\n'));
}

const ctx = (over: Partial<VerdictContext> = {}): VerdictContext => ({
  exitCode: 0,
  signal: null,
  expectedSocle: SOCLE,
  stderrTail: '',
  minVersion: '0.85.0',
  ...over,
});

const inventory = { pi_version: '0.85.4', present: [...SOCLE], missing: [] as string[] };

function summary(over: Partial<StreamSummary> = {}): StreamSummary {
  return {
    text: '',
    tokens: 0,
    cost: 0,
    calls: [],
    gateErrors: [],
    turns: 1,
    toolCalls: 0,
    retries: 0,
    lines: 1,
    nonJson: 0,
    model: 'scripted/alpha',
    inventory,
    ...over,
  };
}

describe('verdict: the socle proof comes first', () => {
  it('no inventory → refused even with a valid envelope, motif points at --approve / .pi/settings.json', () => {
    const v = verdict(summary({ inventory: undefined, envelope: { status: 'success' } }), ctx());
    expect(v).toMatchObject({ ok: false, kind: 'socle' });
    expect(!v.ok && v.motif).toMatch(/extensions were not loaded/);
    expect(!v.ok && v.motif).toMatch(/--approve/);
    expect(!v.ok && v.motif).toMatch(/\.pi\/settings\.json/);
  });

  it('a captured run without socle is refused although its text carries an envelope', () => {
    expect(verdict(captured('text-no-socle'), ctx())).toMatchObject({ ok: false, kind: 'socle' });
  });

  it('an extension reported missing by the inventory is named', () => {
    const v = verdict(captured('socle-missing'), ctx());
    expect(v).toEqual({
      ok: false,
      kind: 'socle',
      motif: 'socle incomplete: extension factory-compact not loaded by pi',
    });
  });

  it('an expected extension absent from `present` is named too (inventory built with another list)', () => {
    const v = verdict(
      summary({ inventory: { pi_version: '1.6.0', present: ['factory-inventory'], missing: [] } }),
      ctx({ expectedSocle: ['factory-inventory', 'factory-guard', 'factory-obs'] }),
    );
    expect(v).toEqual({
      ok: false,
      kind: 'socle',
      motif: 'socle incomplete: extensions factory-guard, factory-obs not loaded by pi',
    });
  });

  it('pi older than the minimum → refused with "run `pi update`"', () => {
    const v = verdict(
      summary({ inventory: { ...inventory, pi_version: '0.84.9' }, envelope: { status: 'success' } }),
      ctx(),
    );
    expect(v).toEqual({ ok: false, kind: 'version', motif: 'pi 0.84.9 is older than 0.85.0 — run `pi update`' });
  });

  it('an unreadable pi version is refused as well', () => {
    expect(verdict(summary({ inventory: { ...inventory, pi_version: 'unknown' } }), ctx())).toMatchObject({
      ok: false,
      kind: 'version',
    });
  });
});

describe('verdict: then the envelope, the errors, the exit, the text', () => {
  it('the gate envelope wins (captured run)', () => {
    const v = verdict(captured('gate'), ctx({ requestedModel: 'scripted/alpha' }));
    expect(v).toEqual({
      ok: true,
      source: 'gate',
      envelope: { status: 'success', summary: 'wrote notes.txt', changed_files: ['notes.txt'], artifacts: [] },
    });
  });

  it('the envelope wins over a stopReason error and a non-zero exit', () => {
    const v = verdict(
      summary({ envelope: { status: 'fail' }, stopReason: 'error', errorMessage: 'boom' }),
      ctx({ exitCode: 1 }),
    );
    expect(v).toMatchObject({ ok: true, source: 'gate' });
  });

  it('stopReason error → model_error with the provider message as evidence (pi exited 0)', () => {
    const v = verdict(captured('outage'), ctx());
    expect(v).toEqual({
      ok: false,
      kind: 'model_error',
      motif: 'model error: 429: {"message":"Rate limit exceeded","type":"rate_limit_error","code":429}',
    });
  });

  it('stopReason error even with some text is a failure', () => {
    expect(verdict(summary({ text: 'partial', stopReason: 'error', errorMessage: 'terminated' }), ctx())).toMatchObject(
      { ok: false, kind: 'model_error' },
    );
  });

  it('a tripped factory-guard gives its own reason, not pi\'s bare "operation aborted"', () => {
    const reason =
      'factory-guard tripped — tool call limit reached: 1 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped';
    const v = verdict(
      summary({ stopReason: 'error', errorMessage: 'This operation was aborted', guardTrip: reason }),
      ctx(),
    );
    expect(v).toEqual({ ok: false, kind: 'guard', motif: reason });
  });

  it('stopReason aborted → aborted', () => {
    expect(verdict(summary({ text: 'half', stopReason: 'aborted' }), ctx())).toEqual({
      ok: false,
      kind: 'aborted',
      motif: 'turn aborted',
    });
    expect(verdict(summary({ stopReason: 'aborted', errorMessage: 'Request was aborted' }), ctx())).toEqual({
      ok: false,
      kind: 'aborted',
      motif: 'turn aborted: Request was aborted',
    });
  });

  it('non-zero exit with no text → exit, with the stderr tail on one line', () => {
    const v = verdict(
      summary(),
      ctx({ exitCode: 1, stderrTail: 'loading…\nError: extension threw\n  at load (x.ts:1)\n' }),
    );
    expect(v).toEqual({
      ok: false,
      kind: 'exit',
      motif: 'pi exited with code 1: loading… | Error: extension threw | at load (x.ts:1)',
    });
  });

  it('a signal with no text → exit, naming the signal', () => {
    const v = verdict(summary(), ctx({ exitCode: null, signal: 'SIGKILL' }));
    expect(v).toEqual({ ok: false, kind: 'exit', motif: 'pi was killed by SIGKILL: no stderr' });
  });

  it('non-zero exit but a text → the text (fallback path)', () => {
    expect(verdict(summary({ text: 'answer' }), ctx({ exitCode: 1 }))).toEqual({
      ok: true,
      source: 'text',
      text: 'answer',
    });
  });

  it('no envelope, no text, exit 0 → empty', () => {
    expect(verdict(summary({ text: '  ' }), ctx())).toMatchObject({ ok: false, kind: 'empty' });
  });

  it('a text answer with the socle loaded → the text', () => {
    expect(verdict(summary({ text: 'hello' }), ctx())).toEqual({ ok: true, source: 'text', text: 'hello' });
  });
});

describe('verdict: the observed model must be the requested one', () => {
  it('mismatch names both routes', () => {
    const v = verdict(
      summary({ text: 'hi', model: 'openrouter/other/model' }),
      ctx({ requestedModel: 'openrouter/z-ai/glm-5.3' }),
    );
    expect(v).toEqual({
      ok: false,
      kind: 'model_mismatch',
      motif: 'model mismatch: requested openrouter/z-ai/glm-5.3, pi answered with openrouter/other/model',
    });
  });

  it('applies to a gate envelope too, and a missing observed model is a mismatch', () => {
    expect(verdict(captured('gate'), ctx({ requestedModel: 'scripted/beta' }))).toMatchObject({
      ok: false,
      kind: 'model_mismatch',
    });
    expect(
      verdict(summary({ envelope: { status: 'fail' }, model: undefined }), ctx({ requestedModel: 'a/b' })),
    ).toMatchObject({
      ok: false,
      kind: 'model_mismatch',
      motif: 'model mismatch: requested a/b, pi answered with no observed model',
    });
  });

  it('no requested model → nothing to compare', () => {
    expect(verdict(summary({ text: 'hi', model: 'x/y' }), ctx())).toMatchObject({ ok: true });
  });

  it('a failure keeps its own motif rather than a mismatch', () => {
    expect(
      verdict(summary({ stopReason: 'error', errorMessage: '503', model: 'x/y' }), ctx({ requestedModel: 'a/b' })),
    ).toMatchObject({ kind: 'model_error' });
  });
});

describe('verdict motifs are one line', () => {
  it('multi-line provider errors are flattened', () => {
    const v = verdict(summary({ stopReason: 'error', errorMessage: '500: {\n  "error": "down"\n}' }), ctx());
    expect(!v.ok && v.motif).toBe('model error: 500: { "error": "down" }');
  });
});

describe('compareVersions', () => {
  it('compares numerically, component by component', () => {
    expect(compareVersions('0.85.0', '0.85.0')).toBe(0);
    expect(compareVersions('0.85.10', '0.85.9')).toBe(1);
    expect(compareVersions('0.9.0', '0.85.0')).toBe(-1);
    expect(compareVersions('1.0', '0.85.0')).toBe(1);
    expect(compareVersions('v0.85.1-beta.1', '0.85.0')).toBe(1);
  });
});

describe.each(['pi', 'pi-1.6'] as const)('verdict on the streams recorded in test/fixtures/%s', (dir) => {
  it('no socle → refused; a missing extension → named', () => {
    expect(verdict(captured('text-no-socle', dir), ctx())).toMatchObject({ ok: false, kind: 'socle' });
    expect(verdict(captured('socle-missing', dir), ctx())).toEqual({
      ok: false,
      kind: 'socle',
      motif: 'socle incomplete: extension factory-compact not loaded by pi',
    });
  });

  it('the gate envelope wins, from the requested model only', () => {
    expect(verdict(captured('gate', dir), ctx({ requestedModel: 'scripted/alpha' }))).toMatchObject({
      ok: true,
      source: 'gate',
      envelope: { status: 'success' },
    });
    expect(verdict(captured('gate', dir), ctx({ requestedModel: 'scripted/beta' }))).toMatchObject({
      ok: false,
      kind: 'model_mismatch',
    });
  });

  it('the outage is a model_error carrying the provider message (the fallback trigger)', () => {
    expect(verdict(captured('outage', dir), ctx())).toEqual({
      ok: false,
      kind: 'model_error',
      motif: 'model error: 429: {"message":"Rate limit exceeded","type":"rate_limit_error","code":429}',
    });
  });
});

describe('verdict on pi 1.x aborts (agent_settled.aborted)', () => {
  it("the recorded guard trip (stopReason aborted, settled aborted) gives the guard's reason", () => {
    expect(verdict(captured('aborted', 'pi-1.6'), ctx())).toEqual({
      ok: false,
      kind: 'guard',
      motif:
        'factory-guard tripped — tool call limit reached: 1 call(s) allowed (FACTORY_MAX_TOOL_CALLS); the agent is stopped',
    });
  });

  it('a run pi says was aborted is "aborted", even when its last message reads as an error', () => {
    const v = verdict(
      summary({ stopReason: 'error', errorMessage: 'This operation was aborted', settledAborted: true }),
      ctx(),
    );
    expect(v).toEqual({ ok: false, kind: 'aborted', motif: 'turn aborted: This operation was aborted' });
    expect(verdict(summary({ text: 'done', stopReason: 'stop', settledAborted: false }), ctx())).toMatchObject({
      ok: true,
      source: 'text',
    });
  });
});

describe('verdict: the provider key, said first (issue 10 point 6)', () => {
  const PI_NO_KEY =
    'No API key found for openrouter.\n\nUse /login to log into a provider via OAuth or API key. See:\n  /x/docs/providers.md\n';

  it('no key: pi stops before loading the node; the motif names the variable, not the extensions (exit 2)', () => {
    const v = verdict(
      summary({ inventory: undefined, lines: 1 }),
      ctx({ exitCode: 1, stderrTail: PI_NO_KEY, requestedModel: 'openrouter/anthropic/claude-sonnet-4.5' }),
    );
    expect(v).toEqual({
      ok: false,
      kind: 'auth',
      motif: 'no API key for openrouter: put OPENROUTER_API_KEY in .env (or in the environment), then `factory doctor`',
    });
    const anthropic = verdict(
      summary({ inventory: undefined }),
      ctx({ exitCode: 1, stderrTail: 'No API key found for anthropic.' }),
    );
    expect(anthropic).toMatchObject({ kind: 'auth', motif: expect.stringContaining('put ANTHROPIC_API_KEY in .env') });
    expect(
      verdict(summary({ inventory: undefined }), ctx({ exitCode: 1, stderrTail: 'No API key found for google.' })),
    ).toMatchObject({ motif: expect.stringContaining('GEMINI_API_KEY') });
  });

  it('a rejected key: the provider and the variable, never the provider text (it may quote the key)', () => {
    const secret = 'sk-or-v1-0123456789abcdef0123456789abcdef';
    const v = verdict(
      summary({ stopReason: 'error', errorMessage: `401 {"error":{"message":"Invalid API key: ${secret}"}}` }),
      ctx({ requestedModel: 'openrouter/z-ai/glm-5.3' }),
    );
    expect(v).toEqual({
      ok: false,
      kind: 'auth',
      motif: 'the openrouter API key was rejected (401): check OPENROUTER_API_KEY in .env, then `factory doctor`',
    });
    expect(JSON.stringify(v)).not.toContain(secret);
    // Any other provider error stays a model error (retried, or a fallback).
    expect(verdict(summary({ stopReason: 'error', errorMessage: '529 overloaded' }), ctx())).toMatchObject({
      kind: 'model_error',
    });
  });
});
