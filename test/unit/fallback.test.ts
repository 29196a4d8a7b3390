import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/contract/errors.js';
import { outageReason, withFallback } from '../../src/harness/fallback.js';
import type { HarnessRequest, HarnessResult } from '../../src/harness/types.js';
import { workspacePaths } from '../../src/config/paths.js';
import { defaultRoster, effectiveFallback, type Roster } from '../../src/config/roster.js';

const modelError = (text: string) =>
  new HarnessError(`model error: ${text}`, 's-1', { kind: 'model_error', tokens: 3, cost: 0.5 });

describe('outageReason', () => {
  it('recognises provider outages', () => {
    for (const text of [
      '429: {"message":"Rate limit exceeded"}',
      '503: Service unavailable',
      'Overloaded',
      'no endpoints found',
      '500 Internal Server Error',
      'insufficient capacity',
    ]) {
      expect(outageReason(modelError(text))).toBeDefined();
    }
  });

  it('ignores bad keys, aborts, timeouts and other kinds', () => {
    expect(outageReason(modelError('401: Invalid API key'))).toBeUndefined();
    expect(outageReason(modelError('403: Forbidden'))).toBeUndefined();
    expect(outageReason(modelError('400: invalid_request_error'))).toBeUndefined();
    expect(outageReason(new HarnessError('turn aborted: 503', 's', { kind: 'aborted' }))).toBeUndefined();
    expect(outageReason(new HarnessError('harness silent after 60 s', 's', { kind: 'timeout' }))).toBeUndefined();
    expect(outageReason(new Error('503'))).toBeUndefined();
  });
});

describe('withFallback', () => {
  const request = (over: Partial<HarnessRequest> = {}): HarnessRequest => ({
    prompt: 'mission',
    cwd: '/r',
    workspace: workspacePaths('/r'),
    model: 'p/a',
    fallbackModel: 'p/b',
    envelopeSchema: { title: 'Envelope', schema: {} },
    identity: { adwId: 'x', phase: 'prompt', role: 'r' },
    timeoutMs: 1,
    idleTimeoutMs: 1,
    ...over,
  });
  const ok = (r: HarnessRequest): HarnessResult => ({
    sessionId: r.sessionId ?? 'new',
    payload: 'x',
    source: 'text',
    tokens: 10,
    cost: 1,
    model: r.model,
    seconds: 1,
  });

  it('relaunches once in the same session on the fallback, summing both calls', async () => {
    const calls: [HarnessRequest, string | undefined][] = [];
    const result = await withFallback(request(), async (r, reason) => {
      calls.push([r, reason]);
      if (calls.length === 1) throw modelError('503: down');
      return ok(r);
    });
    expect(calls.map(([r, reason]) => [r.model, r.sessionId, reason])).toEqual([
      ['p/a', undefined, undefined],
      ['p/b', 's-1', 'fallback'],
    ]);
    expect(calls[1]![0].prompt).toMatch(/down \(503: down\)/);
    expect(result).toMatchObject({
      model: 'p/b',
      tokens: 13,
      cost: 1.5,
      fallback: { from: 'p/a', reason: '503: down' },
    });
  });

  it('does not fall back twice, and says so when the fallback fails too', async () => {
    let calls = 0;
    const attempt = withFallback(request(), async () => {
      calls += 1;
      throw modelError('503: down');
    });
    await expect(attempt).rejects.toThrow(/after a fallback from p\/a/);
    expect(calls).toBe(2);
  });

  it('does nothing without a fallback, or when it equals the failing route', async () => {
    for (const fallbackModel of [undefined, 'p/a']) {
      let calls = 0;
      await expect(
        withFallback(request({ fallbackModel }), async () => {
          calls += 1;
          throw modelError('503: down');
        }),
      ).rejects.toThrow(/503/);
      expect(calls).toBe(1);
    }
  });
});

describe('the fallback a run uses', () => {
  const roster = (fallback?: string): Roster => ({
    ...defaultRoster(),
    gateway: 'openrouter',
    ...(fallback ? { fallbackModel: fallback } : {}),
  });

  it('the roster first, else FACTORY_FALLBACK_MODEL of the environment, else of .env — routed through the gateway', () => {
    expect(effectiveFallback(roster('z-ai/glm-5.3'), { FACTORY_FALLBACK_MODEL: 'x/y' }, {})).toBe(
      'openrouter/z-ai/glm-5.3',
    );
    expect(
      effectiveFallback(
        roster(),
        { FACTORY_FALLBACK_MODEL: 'anthropic/claude-haiku-4.5' },
        { FACTORY_FALLBACK_MODEL: 'other/z' },
      ),
    ).toBe('openrouter/anthropic/claude-haiku-4.5');
    expect(effectiveFallback(roster(), {}, { FACTORY_FALLBACK_MODEL: 'anthropic/claude-haiku-4.5' })).toBe(
      'openrouter/anthropic/claude-haiku-4.5',
    );
    expect(effectiveFallback(roster(), {}, {})).toBeUndefined();
    expect(effectiveFallback(roster(), { FACTORY_FALLBACK_MODEL: '  ' }, {})).toBeUndefined();
  });
});
