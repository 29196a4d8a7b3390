// adw_prompt end to end: the real pi 0.85.1, the factory's real pi node, the scripted model, temp git repos.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../src/contract/errors.js';
import { Envelope, schema } from '../../src/envelope/envelopes.js';
import { runPiAttempt } from '../../src/harness/pi.js';
import { readLedger } from '../../src/trace/ledger.js';
import { call, contentText, fail, hang, report, say } from '../../src/scripted/tape.js';
import { installPartialNode } from '../helpers/partialNode.js';
import { makeTempRepo } from '../helpers/repo.js';
import {
  ofType,
  processesTagged,
  promptBench,
  runPrompt,
  sessionFileTokens,
  type PromptBench,
} from '../helpers/factory.js';

const GOOD = {
  status: 'success',
  summary: 'Three files: README.md, src/main.js, .gitignore.',
  artifacts: ['README.md'],
  notes_for_next_agent: '',
};

let bench: PromptBench | undefined;
afterEach(async () => {
  await bench?.cleanup();
  bench = undefined;
});

describe('adw_prompt through the real pi', () => {
  it('goes green with the envelope from the typed gate, declaring the session before pi starts', async () => {
    bench = await promptBench({ default: [call('bash', { command: 'git ls-files' }), report(GOOD)] });
    const { exit, events, run } = await runPrompt(bench, 'Which files make up this repo?');
    expect(exit).toBe(0);
    expect(run.results.dispose).toMatchObject({ status: 'success', summary: GOOD.summary });
    const ok = ofType(events, 'phase_ok').find((e) => e.phase === 'prompt')!;
    expect(ok.attempt).toBe(1);
    expect(ok.tokens).toBeGreaterThan(0);
    expect(ok.cost).toBeGreaterThan(0);
    // The gate ended the run: no model call after report_phase.
    expect(bench.rig.model.requests).toHaveLength(2);
    const activity = ofType(events, 'activity').map((e) => e.activity);
    expect(activity).toContainEqual(expect.objectContaining({ kind: 'tool_start', tool: 'bash' }));
    const ledger = readLedger(bench.paths.ledgerFile);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({
      session_id: run.sessions.prompt,
      cwd: bench.repo.dir,
      phase: 'prompt',
      adw_id: run.adwId,
      model: 'scripted/alpha',
    });
    const written = JSON.parse(fs.readFileSync(`${bench.paths.schemasDir}/Envelope.json`, 'utf8'));
    expect(written.title).toBe('Envelope');
    expect(sessionFileTokens(bench.paths.sessionsDir, run.sessions.prompt!).tokens).toBe(run.tokens);
  });

  it('accepts an envelope written as text, not fooled by braces in the prose', async () => {
    const text =
      'The config reads `const cfg = { theme: "dark" }` and {this} is prose.\n{"status": "success", "summary": "found {2} files", "artifacts": []}';
    bench = await promptBench({ default: [say(text)] });
    const { exit, run } = await runPrompt(bench, 'Which files?');
    expect(exit).toBe(0);
    expect(run.results.dispose).toMatchObject({ status: 'success', summary: 'found {2} files' });
  });

  it('corrects a bad envelope on attempt 2 in the same live session, without re-billing the history', async () => {
    bench = await promptBench({ default: [say('Two files, I think. No JSON from me.'), report(GOOD)] });
    const { exit, events, run } = await runPrompt(bench, 'Which files?');
    expect(exit).toBe(0);
    const attempts = ofType(events, 'attempt_started').filter((e) => e.phase === 'prompt');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(new Set(attempts.map((a) => a.sessionId)).size).toBe(1);
    const failed = ofType(events, 'attempt_failed')[0]!;
    expect(failed.motif).toMatch(/no JSON object/i);
    expect(failed.willRetry).toBe(true);
    // The correction went into the same session: the second request carries the first exchange.
    const [first, second] = bench.rig.model.requests;
    expect(second!.messages).toBeGreaterThan(first!.messages);
    const lastUser = JSON.stringify(second!.body.messages?.at(-1));
    expect(lastUser).toMatch(/no JSON object/i);
    expect(lastUser).toContain('report_phase');
    // One session file, and the run's tokens are exactly what pi billed in it (nothing counted twice).
    const persisted = sessionFileTokens(bench.paths.sessionsDir, run.sessions.prompt!);
    expect(persisted.files).toBe(1);
    expect(persisted.assistantMessages).toBe(2);
    expect(run.tokens).toBe(persisted.tokens);
    expect(readLedger(bench.paths.ledgerFile).map((l) => l.session_id)).toEqual([
      run.sessions.prompt,
      run.sessions.prompt,
    ]);
  });

  it('refuses to resume a session from another folder before any model call', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    const { exit, run } = await runPrompt(bench, 'Which files?');
    expect(exit).toBe(0);
    const before = bench.rig.model.requests.length;
    const elsewhere = makeTempRepo();
    try {
      const jsonSchema = schema(Envelope) as { title: string };
      const attempt = runPiAttempt(bench.rig.pi, {
        prompt: 'continue',
        cwd: elsewhere.dir,
        workspace: bench.paths,
        sessionId: run.sessions.prompt,
        envelopeSchema: { title: jsonSchema.title, schema: jsonSchema },
        identity: { adwId: run.adwId, phase: 'prompt', role: 'prompter' },
        timeoutMs: 30_000,
        idleTimeoutMs: 30_000,
        env: bench.rig.env,
      });
      await expect(attempt).rejects.toThrow(/resume refused: session .* was born in/);
      await attempt.catch((error: unknown) => expect((error as HarnessError).sessionId).toBe(run.sessions.prompt));
    } finally {
      elsewhere.cleanup();
    }
    expect(bench.rig.model.requests.length).toBe(before);
    expect(readLedger(bench.paths.ledgerFile)).toHaveLength(1);
  });

  it('fails with the provider message when the model errors although pi exits 0', async () => {
    bench = await promptBench({ default: [fail(529, { times: Infinity })] });
    const { exit, events } = await runPrompt(bench, 'Which files?', { retries: 0 });
    expect(exit).toBe(1);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.phase).toBe('prompt');
    expect(failed.motif).toMatch(/^model error: .*529/);
  });

  it("a key the provider rejects (401) is the installation's: exit 2, the variable named, not the provider text", async () => {
    bench = await promptBench({ default: [fail(401, { times: Infinity })] });
    const { exit, events } = await runPrompt(bench, 'Which files?', { retries: 2 });
    expect(exit).toBe(2);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.motif).toBe(
      'the scripted API key was rejected (401): check SCRIPTED_API_KEY in .env, then `factory doctor`',
    );
    expect(ofType(events, 'attempt_started').filter((e) => e.phase === 'prompt')).toHaveLength(1); // never retried
  });

  it('a retry after a first attempt that stalled before pi wrote its session resends the whole ask', async () => {
    bench = await promptBench({ default: [hang(), report(GOOD)] });
    // The watchdog counts from the spawn: under load pi may take seconds to boot, and a stall before the first request
    // would shift the tape. 4 s keeps the stall the first attempt's.
    const { exit, events } = await runPrompt(bench, 'Which files hold the tests?', { retries: 1, idleTimeoutMs: 4000 });
    expect(exit).toBe(0);
    expect(ofType(events, 'attempt_failed')[0]!.motif).toMatch(/no progress from pi/);
    // Whatever pi kept of the first attempt (0.85 writes the session lazily: nothing; 1.x eagerly: the ask), the
    // model of the second attempt sees the mission, never a bare correction in an empty session.
    const second = bench.rig.model.requests.at(-1)!;
    const users = (second.body.messages ?? []).filter((m) => m.role === 'user').map((m) => contentText(m.content));
    expect(users.some((text) => text.startsWith('Which files hold the tests?'))).toBe(true);
  });

  it('a tripped circuit breaker gets one relaunch in the same session, on a wrap-up budget, the limit named', async () => {
    const ls = call('bash', { command: 'ls' });
    bench = await promptBench({ default: [ls, ls, ls, report(GOOD)] });
    const { exit, events, run } = await runPrompt(bench, 'Which files?', { retries: 0, limits: { maxToolCalls: 2 } });
    expect(exit).toBe(0);
    const notes = ofType(events, 'activity')
      .filter((e) => e.activity.kind === 'note')
      .map((e) => (e.activity as { text: string }).text);
    expect(notes).toContainEqual(
      expect.stringMatching(/^circuit breaker: .* — one relaunch in the same session to report$/),
    );
    const last = bench.rig.model.requests.at(-1)!;
    const users = (last.body.messages ?? []).filter((m) => m.role === 'user').map((m) => contentText(m.content));
    expect(users.some((t) => t.startsWith('Which files?'))).toBe(true); // the same session: the mission is kept
    expect(users.at(-1)).toMatch(/^The circuit breaker stopped your last turn: /);
    expect(readLedger(bench.paths.ledgerFile).map((l) => l.session_id)).toEqual([
      run.sessions.prompt,
      run.sessions.prompt,
    ]);
  });

  it('ends a stalled stream with the watchdog and leaves no process behind', async () => {
    bench = await promptBench({ default: [hang()] });
    const { exit, events, run } = await runPrompt(bench, 'Which files?', { retries: 0, idleTimeoutMs: 1500 });
    expect(exit).toBe(1);
    expect(ofType(events, 'phase_failed')[0]!.motif).toMatch(/no progress from pi for 2 s/);
    expect(processesTagged(run.adwId)).toEqual([]);
  });

  it('refuses a node that lacks a socle extension, naming it', async () => {
    bench = await promptBench({ default: [report(GOOD)] });
    // A project node that loads only four of the five socle extensions.
    installPartialNode(bench.repo.dir, ['damage-control']);
    const { exit, events } = await runPrompt(bench, 'Which files?', { retries: 2 });
    expect(exit).toBe(2);
    const failed = ofType(events, 'phase_failed')[0]!;
    expect(failed.motif).toMatch(/damage-control/);
    // Not retried: the node is at fault, not the attempt.
    expect(ofType(events, 'attempt_started')).toHaveLength(1);
  });
});
