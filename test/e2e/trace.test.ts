// The trace store end to end: a real adw_prompt run (real pi 0.85.1, the factory's pi node, the scripted model),
// recorded live as the composition root does (run log recorder + store), then synced with the ledger and the
// factory-obs harness JSONL that pi itself wrote.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Run } from '../../src/engine/runner.js';
import { call, report, say } from '../../src/scripted/tape.js';
import { createRunRecorder, readRunLog, runLogPath } from '../../src/trace/runLog.js';
import { openTraceStore, type TraceStore } from '../../src/trace/store.js';
import { ofType, promptBench, runPrompt, type PromptBench } from '../helpers/factory.js';
import { harnessFile, LATEST_RUN_PHASES, outside } from '../helpers/traceFixtures.js';

const GOOD = { status: 'success', summary: 'Three files.', artifacts: ['README.md'], notes_for_next_agent: '' };

let bench: PromptBench | undefined;
let store: TraceStore | undefined;
afterEach(async () => {
  store?.close();
  store = undefined;
  await bench?.cleanup();
  bench = undefined;
});

describe('trace store over a real prompt run', () => {
  it('indexes the run, its phases with the run figures, and the session harness lines joined to (adw_id, prompt)', async () => {
    // Attempt 1 answers without an envelope; the correction runs a tool and reports: two attempts, one session.
    bench = await promptBench({
      default: [say('No JSON from me.'), call('bash', { command: 'git ls-files' }), report(GOOD)],
    });
    const warnings: string[] = [];
    const recorder = createRunRecorder(bench.paths, { onWarning: (m) => warnings.push(m) });
    store = openTraceStore(bench.paths, { onWarning: (m) => warnings.push(m) });
    const run = new Run('adw_prompt', bench.repo.dir);
    run.subscribe(recorder.listener);
    run.subscribe((e) => store!.recordEvent(e));
    const { exit, events } = await runPrompt(bench, 'Which files make up this repo?', { run });
    await recorder.close();
    const report1 = store.syncAll();
    expect(exit).toBe(0);
    expect(warnings).toEqual([]);
    expect(report1.ok).toBe(true);
    expect(report1.ledgerLines).toBe(2); // the session declared before each attempt
    expect(report1.harnessLines).toBeGreaterThan(0);
    // Everything live was already there: the run log added nothing.
    expect(report1.events).toBe(0);

    const sessionId = run.sessions.prompt!;
    const [row] = store.listRuns(5);
    expect(row).toMatchObject({
      adwId: run.adwId,
      adwName: 'adw_prompt',
      status: 'green',
      phases: '2/2',
      exitCode: 0,
      tokens: run.tokens,
      cwd: bench.repo.dir,
    });
    expect(row!.tokens).toBeGreaterThan(0);
    expect(row!.cost).toBeCloseTo(run.cost, 12);

    const phases = store.phaseRows(run.adwId);
    const ok = ofType(events, 'phase_ok').find((e) => e.phase === 'prompt')!;
    expect(phases.map((p) => [p.name, p.kind, p.status])).toEqual([
      ['prompt', 'agent', 'ok'],
      ['dispose', 'code', 'ok'],
    ]);
    expect(phases[0]).toMatchObject({
      attempts: 2,
      maxAttempts: 3,
      tokens: ok.tokens,
      sessionId: sessionId,
      model: 'scripted/alpha',
    });
    expect(phases[0]!.cost).toBeCloseTo(ok.cost, 12);
    expect(phases[0]!.motif).toMatch(/no JSON object/i);
    expect(phases[0]!.result).toMatchObject({ status: 'success', summary: GOOD.summary });
    expect(phases.reduce((sum, p) => sum + p.tokens, 0)).toBe(run.tokens);

    const db = outside(bench.paths);
    try {
      const latest = db.prepare(LATEST_RUN_PHASES).all('adw_prompt') as { name: string; tokens: number }[];
      expect(latest.map((r) => [r.name, r.tokens])).toEqual([
        ['prompt', run.tokens],
        ['dispose', 0],
      ]);
      const joined = db
        .prepare('SELECT type FROM harness_by_phase WHERE adw_id = ? AND phase = ? ORDER BY line_no')
        .pluck()
        .all(run.adwId, 'prompt') as string[];
      expect(joined).toEqual(expect.arrayContaining(['session_start', 'tool_start', 'tool_end', 'message_end']));
      // Every line factory-obs wrote for that session, no more, no less.
      const written = fs
        .readFileSync(harnessFile(bench.paths, sessionId), 'utf8')
        .split('\n')
        .filter((l) => l.trim());
      expect(joined).toHaveLength(written.length);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
    const toolStart = store.harnessRows(run.adwId, 'prompt').find((h) => h.type === 'tool_start')!;
    expect(toolStart.record).toMatchObject({
      session_id: sessionId,
      adw_id: run.adwId,
      phase: 'prompt',
      tool_name: 'bash',
    });

    // Replay: the stored events are the run's, in order, as is the run log.
    expect(store.runEvents(run.adwId)).toEqual(events);
    expect(readRunLog(runLogPath(bench.paths, run.adwId))).toEqual(events);
    // Idempotent: a second sync adds nothing.
    expect(store.syncAll()).toEqual({ ok: true, events: 0, harnessLines: 0, ledgerLines: 0 });
    expect(store.integrityCheck()).toBe('ok');
  });
});
