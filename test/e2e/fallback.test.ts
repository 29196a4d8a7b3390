// Provider-outage fallback through the real pi: one relaunch on the fallback model in the same session.
import { afterEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../src/trace/ledger.js';
import { fail, report } from '../../src/scripted/tape.js';
import { ofType, promptBench, runPrompt, sessionFileTokens, type PromptBench } from '../helpers/factory.js';

const GOOD = { status: 'success', summary: 'done on the fallback', artifacts: [], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

function withFallback(b: PromptBench, model: string): void {
  b.rig.env.FACTORY_FALLBACK_MODEL = model;
}

describe('provider-outage fallback', () => {
  it('a 503 that never clears finishes green on the fallback model, in the same session', async () => {
    bench = await promptBench({ 'model:alpha': [fail(503, { times: Infinity })], 'model:beta': [report(GOOD)] });
    withFallback(bench, 'scripted/beta');
    const { exit, run, events } = await runPrompt(bench, 'Which files?', { retries: 0 });
    expect(exit).toBe(0);
    expect(run.results.dispose).toMatchObject({ summary: 'done on the fallback' });
    const sessionId = run.sessions.prompt!;
    const ledger = readLedger(bench.paths.ledgerFile);
    expect(ledger.map((l) => [l.session_id, l.model, l.reason])).toEqual([
      [sessionId, 'scripted/alpha', undefined],
      [sessionId, 'scripted/beta', 'fallback'],
    ]);
    const models = bench.rig.model.requests.map((r) => r.body.model);
    expect(models.filter((m) => m === 'alpha').length).toBeGreaterThanOrEqual(1);
    expect(models.at(-1)).toBe('beta');
    // The relay ask carries the reason and the history of the failed call stays in the one session file.
    expect(JSON.stringify(bench.rig.model.requests.at(-1)!.body.messages?.at(-1))).toMatch(/provider .* down \(503/);
    const persisted = sessionFileTokens(bench.paths.sessionsDir, sessionId);
    expect(persisted.files).toBe(1);
    expect(run.tokens).toBe(persisted.tokens);
    expect(ofType(events, 'activity').map((e) => e.activity)).toContainEqual(
      expect.objectContaining({ kind: 'note', text: expect.stringMatching(/relaunching on scripted\/beta/) }),
    );
  });

  it('never falls back on an invalid key (401)', async () => {
    bench = await promptBench({ 'model:alpha': [fail(401, { times: Infinity })], 'model:beta': [report(GOOD)] });
    withFallback(bench, 'scripted/beta');
    const { exit, events } = await runPrompt(bench, 'Which files?', { retries: 0 });
    expect(exit).toBe(2);
    expect(ofType(events, 'phase_failed')[0]!.motif).toMatch(/API key was rejected \(401\)/);
    expect(bench.rig.model.requests.some((r) => r.body.model === 'beta')).toBe(false);
    expect(readLedger(bench.paths.ledgerFile)).toHaveLength(1);
  });

  it('ignores a fallback equal to the failing model', async () => {
    bench = await promptBench({ 'model:alpha': [fail(503, { times: Infinity })] });
    withFallback(bench, 'scripted/alpha');
    const { exit, events } = await runPrompt(bench, 'Which files?', { retries: 0 });
    expect(exit).toBe(1);
    expect(ofType(events, 'phase_failed')[0]!.motif).toMatch(/503/);
    expect(readLedger(bench.paths.ledgerFile)).toHaveLength(1);
  });
});
