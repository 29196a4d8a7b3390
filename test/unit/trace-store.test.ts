// The trace store: live recording, ingestion of the raw traces, the SPEC 3.9 query and replay.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import { createRunRecorder, runLogPath } from '../../src/trace/runLog.js';
import { openTraceStore, type TraceStore } from '../../src/trace/store.js';
import type { RunRow as HomeRunRow } from '../../state/controller.js';
import { reduceRun, initialRunState } from '../../state/run/store.js';
import {
  appendHarness,
  buildRun,
  count,
  declare,
  LATEST_RUN_PHASES,
  obsLine,
  outside,
  tempWorkspace,
  type TempWorkspace,
} from '../helpers/traceFixtures.js';

let ws: TempWorkspace;
let store: TraceStore | undefined;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => {
  if (store) expect(store.integrityCheck()).toBe('ok');
  store?.close();
  store = undefined;
  ws.cleanup();
});

/** What the composition root does: the recorder and the store both subscribed to the run. */
async function recordLive(events: RunEvent[], s: TraceStore): Promise<void> {
  const recorder = createRunRecorder(ws.paths);
  for (const e of events) {
    recorder.listener(e);
    s.recordEvent(e);
  }
  await recorder.close();
}

async function writeLogOnly(events: RunEvent[]): Promise<void> {
  const recorder = createRunRecorder(ws.paths);
  events.forEach(recorder.listener);
  await recorder.close();
}

describe('trace store: runs and phases', () => {
  it('records a live run: runs row, phases in plan order, the SPEC 3.9 query, replay equal to what was recorded', async () => {
    store = openTraceStore(ws.paths);
    const events = buildRun('aaaa0001', 1_000);
    await recordLive(events, store);
    store.flush();
    // The rows feed the TUI home as they are (checked by the type checker).
    const rows: HomeRunRow[] = store.listRuns(10);
    const [run] = store.listRuns(10);
    expect(rows).toEqual([run]);
    expect(run).toMatchObject({
      adwId: 'aaaa0001',
      adwName: 'adw_build',
      status: 'green',
      phases: '3/3',
      tokens: 1600,
      cost: 0.016,
      exitCode: 0,
      cwd: '/repo',
    });
    expect(run!.startedAt).toBe(1_010);
    expect(run!.finishedAt).toBe(1_200);
    const phases = store.phaseRows('aaaa0001');
    expect(phases.map((p) => [p.seq, p.name, p.kind, p.status, p.attempts, p.maxAttempts])).toEqual([
      [0, 'check', 'code', 'ok', 1, 1],
      [1, 'build', 'agent', 'ok', 2, 3],
      [2, 'gates', 'code', 'ok', 1, 1],
    ]);
    expect(phases[1]).toMatchObject({
      tokens: 1600,
      cost: 0.016,
      sessionId: 'sess-aaaa0001',
      model: 'scripted/alpha',
      motif: 'npm test failed: 1 failing',
      result: { status: 'success', changed_files: ['a.js'] },
    });
    const db = outside(ws.paths);
    try {
      expect(db.prepare(LATEST_RUN_PHASES).all('adw_build')).toEqual([
        { name: 'check', status: 'ok', tokens: 0, cost_usd: 0 },
        { name: 'build', status: 'ok', tokens: 1600, cost_usd: 0.016 },
        { name: 'gates', status: 'ok', tokens: 0, cost_usd: 0 },
      ]);
      expect(count(db, 'SELECT count(*) FROM events WHERE adw_id = ?', 'aaaa0001')).toBe(events.length);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(3);
    } finally {
      db.close();
    }
    const replay = store.runEvents('aaaa0001');
    expect(replay).toEqual(events);
    // The TUI folds the replay through the same reducer as a live run.
    const folded = replay.reduce(reduceRun, initialRunState());
    const live = events.reduce(reduceRun, initialRunState());
    expect(folded).toEqual(live);
  });

  it('the 3.9 query picks the latest run of the ADW; statuses follow the exit code', async () => {
    store = openTraceStore(ws.paths);
    await recordLive(buildRun('aaaa0001', 1_000, 'green'), store);
    await recordLive(buildRun('bbbb0002', 2_000, 'failed'), store);
    await recordLive(buildRun('cccc0003', 3_000, 'interrupted'), store);
    store.flush();
    const runs = store.listRuns(10);
    expect(runs.map((r) => [r.adwId, r.status, r.phases, r.failedPhase])).toEqual([
      ['cccc0003', 'interrupted', '1/3', 'build'],
      ['bbbb0002', 'failed', '2/3', 'gates'],
      ['aaaa0001', 'green', '3/3', undefined],
    ]);
    expect(store.listRuns(1).map((r) => r.adwId)).toEqual(['cccc0003']);
    const db = outside(ws.paths);
    try {
      const rows = db.prepare(LATEST_RUN_PHASES).all('adw_build') as { name: string; status: string }[];
      expect(rows.map((r) => `${r.name}:${r.status}`)).toEqual(['check:ok', 'build:failed', 'gates:pending']);
    } finally {
      db.close();
    }
    expect(store.phaseRows('bbbb0002')[2]).toMatchObject({
      name: 'gates',
      status: 'failed',
      motif: 'npm test: 2 failing',
    });
  });

  it('a run killed mid-attempt stays running with what it spent so far (settled attempt + live usage)', async () => {
    store = openTraceStore(ws.paths);
    await recordLive(buildRun('dddd0004', 1_000, 'crash'), store);
    store.flush();
    const [run] = store.listRuns(5);
    expect(run).toMatchObject({
      status: 'running',
      finishedAt: undefined,
      tokens: 1400,
      cost: expect.closeTo(0.014, 9),
    });
    expect(store.phaseRows('dddd0004')[1]).toMatchObject({
      name: 'build',
      status: 'running',
      attempts: 2,
      tokens: 1400,
    });
  });

  it('a run whose recording cockpit is gone (kill -9) reads as interrupted in the phase it was running', async () => {
    store = openTraceStore(ws.paths);
    await recordLive(buildRun('dddd0004', 1_000, 'crash'), store);
    store.flush();
    // Recorded live by this process, which is alive: still running.
    expect(store.listRuns(5)[0]).toMatchObject({ status: 'running', failedPhase: undefined });
    expect(store.listRuns(5)[0]!.abandoned).toBeUndefined();
    // Hand the run to a process that has exited, as a killed cockpit's would be.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const db = outside(ws.paths);
    try {
      db.prepare('UPDATE runs SET owner_pid = ? WHERE adw_id = ?').run(dead, 'dddd0004');
    } finally {
      db.close();
    }
    expect(store.listRuns(5)[0]).toMatchObject({
      adwId: 'dddd0004',
      status: 'interrupted',
      abandoned: true,
      failedPhase: 'build',
      finishedAt: undefined,
    });
  });

  it('builds the same rows from the run log alone as from the live events', async () => {
    const events = buildRun('aaaa0001', 1_000, 'failed');
    store = openTraceStore(ws.paths);
    await recordLive(events, store);
    store.flush();
    const live = { runs: store.listRuns(5), phases: store.phaseRows('aaaa0001'), events: store.runEvents('aaaa0001') };
    store.close();
    fs.rmSync(`${ws.paths.dataDir}/factory.db`);
    fs.rmSync(`${ws.paths.dataDir}/factory.db-wal`, { force: true });
    fs.rmSync(`${ws.paths.dataDir}/factory.db-shm`, { force: true });
    store = openTraceStore(ws.paths);
    expect(store.syncAll()).toMatchObject({ ok: true, events: events.length });
    expect({
      runs: store.listRuns(5),
      phases: store.phaseRows('aaaa0001'),
      events: store.runEvents('aaaa0001'),
    }).toEqual(live);
  });

  it('batches frequent events: activity waits for the next structural event or flush()', async () => {
    store = openTraceStore(ws.paths, { batchMs: 60_000 });
    const events = buildRun('aaaa0001', 1_000, 'crash');
    const upTo = events.findIndex((e) => e.type === 'activity');
    events.slice(0, upTo + 1).forEach((e) => store!.recordEvent(e));
    const db = outside(ws.paths);
    try {
      const stored = () => count(db, 'SELECT count(*) FROM events WHERE adw_id = ?', 'aaaa0001');
      expect(stored()).toBe(upTo);
      store.flush();
      expect(stored()).toBe(upTo + 1);
      events.slice(upTo + 1).forEach((e) => store!.recordEvent(e));
      // The trailing usage event is still waiting; the attempt_started before it flushed everything earlier.
      expect(stored()).toBe(events.length - 1);
      store.flush();
      expect(stored()).toBe(events.length);
    } finally {
      db.close();
    }
  });
});

describe('trace store: idempotent ingestion', () => {
  it('syncAll twice adds nothing the second time; live events are not duplicated by the run log', async () => {
    store = openTraceStore(ws.paths);
    const events = buildRun('aaaa0001', 1_000);
    await recordLive(events, store);
    declare(ws.paths, 'sess-aaaa0001', 'aaaa0001', 'build');
    appendHarness(ws.paths, 'sess-aaaa0001', `${obsLine('sess-aaaa0001', 'aaaa0001', 'build', 'session_start')}\n`);
    const first = store.syncAll();
    expect(first).toEqual({ ok: true, events: 0, harnessLines: 1, ledgerLines: 1 });
    expect(store.syncAll()).toEqual({ ok: true, events: 0, harnessLines: 0, ledgerLines: 0 });
    expect(store.ingestRun('aaaa0001')).toBe(0);
    expect(store.runEvents('aaaa0001')).toEqual(events);
  });

  it('syncRun catches up one run (its log, the ledger, its own sessions) and leaves other runs to syncAll', async () => {
    store = openTraceStore(ws.paths);
    // Run A: logged only (the store opened late), two sessions of which one never wrote a harness file.
    const a = buildRun('aaaa0001', 1_000);
    await writeLogOnly(a);
    declare(ws.paths, 'sess-a1', 'aaaa0001', 'build');
    declare(ws.paths, 'sess-a2', 'aaaa0001', 'build', 'fallback');
    appendHarness(
      ws.paths,
      'sess-a1',
      `${obsLine('sess-a1', 'aaaa0001', 'build', 'session_start')}\n${obsLine('sess-a1', 'aaaa0001', 'build', 'tool_start')}\n`,
    );
    // Run B: an older run of the same workspace, not indexed yet.
    const b = buildRun('bbbb0002', 500);
    await writeLogOnly(b);
    declare(ws.paths, 'sess-b', 'bbbb0002', 'prompt');
    appendHarness(ws.paths, 'sess-b', `${obsLine('sess-b', 'bbbb0002', 'prompt', 'session_start')}\n`);

    expect(store.syncRun('aaaa0001')).toEqual({ ok: true, events: a.length, harnessLines: 2, ledgerLines: 3 });
    expect(store.listRuns(5).map((r) => r.adwId)).toEqual(['aaaa0001']);
    expect(store.harnessRows('aaaa0001')).toHaveLength(2);
    expect(store.harnessRows('bbbb0002')).toHaveLength(0);
    expect(store.syncRun('aaaa0001')).toEqual({ ok: true, events: 0, harnessLines: 0, ledgerLines: 0 });
    // What syncRun left alone, syncAll (the readers' catch-up) finds.
    expect(store.syncAll()).toEqual({ ok: true, events: b.length, harnessLines: 1, ledgerLines: 0 });
    expect(store.runEvents('bbbb0002')).toEqual(b);
  });

  it('a grown harness file adds only its new lines; a torn last line waits until complete', () => {
    store = openTraceStore(ws.paths);
    const sid = 'sess-aaaa0001';
    declare(ws.paths, sid, 'aaaa0001', 'build');
    appendHarness(
      ws.paths,
      sid,
      [
        obsLine(sid, 'aaaa0001', 'build', 'session_start'),
        obsLine(sid, 'aaaa0001', 'build', 'tool_start', { tool_name: 'bash' }),
      ].join('\n') + '\n',
    );
    store.ingestLedger();
    expect(store.ingestHarness()).toBe(2);
    expect(store.ingestHarness()).toBe(0);
    const toolEnd = obsLine(sid, 'aaaa0001', 'build', 'tool_end', { tool_name: 'bash', is_error: false });
    appendHarness(ws.paths, sid, toolEnd.slice(0, 30));
    expect(store.ingestHarness()).toBe(0);
    appendHarness(
      ws.paths,
      sid,
      `${toolEnd.slice(30)}\n${obsLine(sid, 'aaaa0001', 'build', 'message_end', { message_role: 'assistant' })}\n`,
    );
    expect(store.ingestHarness()).toBe(2);
    const rows = store.harnessRows('aaaa0001', 'build');
    expect(rows.map((r) => [r.lineNo, r.type])).toEqual([
      [0, 'session_start'],
      [1, 'tool_start'],
      [2, 'tool_end'],
      [3, 'message_end'],
    ]);
    expect(rows[2]!.record).toMatchObject({ tool_name: 'bash', is_error: false });
  });

  it('harness_by_phase joins through the ledger once per line, although a session is declared on every attempt', () => {
    store = openTraceStore(ws.paths);
    const sid = 'sess-aaaa0001';
    declare(ws.paths, sid, 'aaaa0001', 'build');
    declare(ws.paths, sid, 'aaaa0001', 'build', 'fallback');
    declare(ws.paths, 'sess-other', 'bbbb0002', 'prompt');
    appendHarness(ws.paths, sid, `${obsLine(sid, 'aaaa0001', 'build', 'tool_start')}\n`);
    appendHarness(ws.paths, 'sess-other', `${obsLine('sess-other', 'bbbb0002', 'prompt', 'tool_start')}\n`);
    // A torn ledger line (crash mid-append) is skipped.
    fs.appendFileSync(ws.paths.ledgerFile, '{"session_id":"sess-torn","cwd":"/x","ph');
    store.syncAll();
    expect(store.sessionRows('aaaa0001').map((s) => s.reason)).toEqual([undefined, 'fallback']);
    expect(store.harnessRows('aaaa0001')).toHaveLength(1);
    const db = outside(ws.paths);
    try {
      expect(db.prepare('SELECT adw_id, phase, type FROM harness_by_phase ORDER BY adw_id').all()).toEqual([
        { adw_id: 'aaaa0001', phase: 'build', type: 'tool_start' },
        { adw_id: 'bbbb0002', phase: 'prompt', type: 'tool_start' },
      ]);
      expect(count(db, "SELECT count(*) FROM sessions WHERE session_id = 'sess-torn'")).toBe(0);
    } finally {
      db.close();
    }
  });

  it('after a fallback the phase records the model that finished, not the one that failed', async () => {
    store = openTraceStore(ws.paths);
    const events = buildRun('aaaa0001', 1_000);
    const at = events.findIndex((e) => e.type === 'phase_ok' && e.phase === 'build');
    const fallback: RunEvent = {
      type: 'fallback',
      adwId: 'aaaa0001',
      ts: 1_005,
      phase: 'build',
      from: 'scripted/alpha',
      to: 'scripted/beta',
      reason: '503 overloaded',
    };
    await recordLive([...events.slice(0, at), fallback, ...events.slice(at)], store);
    store.flush();
    expect(store.phaseRows('aaaa0001').find((p) => p.name === 'build')).toMatchObject({ model: 'scripted/beta' });
  });

  it('tool calls per phase are one GROUP BY: the view has the tool name as a column', () => {
    store = openTraceStore(ws.paths);
    const sid = 'sess-aaaa0001';
    declare(ws.paths, sid, 'aaaa0001', 'build');
    const lines = [
      obsLine(sid, 'aaaa0001', 'build', 'tool_start', { tool_name: 'bash' }),
      obsLine(sid, 'aaaa0001', 'build', 'tool_end', { tool_name: 'bash' }),
      obsLine(sid, 'aaaa0001', 'build', 'tool_start', { tool_name: 'read' }),
      obsLine(sid, 'aaaa0001', 'build', 'tool_start', { tool_name: 'bash' }),
      obsLine(sid, 'aaaa0001', 'build', 'message_end', { message_role: 'assistant' }),
    ];
    appendHarness(ws.paths, sid, `${lines.join('\n')}\n`);
    store.syncAll();
    const db = outside(ws.paths);
    try {
      const perPhase = db.prepare(
        "SELECT phase, tool_name, count(*) AS calls FROM harness_by_phase WHERE adw_id = ? AND type = 'tool_start' GROUP BY phase, tool_name ORDER BY tool_name",
      );
      expect(perPhase.all('aaaa0001')).toEqual([
        { phase: 'build', tool_name: 'bash', calls: 2 },
        { phase: 'build', tool_name: 'read', calls: 1 },
      ]);
      expect(db.prepare("SELECT tool_name FROM harness_by_phase WHERE type = 'message_end'").all()).toEqual([
        { tool_name: null },
      ]);
    } finally {
      db.close();
    }
  });

  it('a store opened in the middle of a run continues the run log numbering', async () => {
    const events = buildRun('aaaa0001', 1_000);
    const recorder = createRunRecorder(ws.paths);
    events.slice(0, 7).forEach(recorder.listener);
    store = openTraceStore(ws.paths);
    // From here both are subscribed, the recorder first (it has already written the event the store then sees).
    for (const e of events.slice(7)) {
      recorder.listener(e);
      store.recordEvent(e);
    }
    await recorder.close();
    store.flush();
    expect(store.runEvents('aaaa0001')).toEqual(events);
    expect(store.syncAll().events).toBe(0);
    expect(store.runEvents('aaaa0001')).toEqual(events);
  });

  it('rebuilds a run from its log when the tables disagree with it (the log is the truth)', async () => {
    const events = buildRun('aaaa0001', 1_000);
    store = openTraceStore(ws.paths);
    // Live events recorded without their first two (a late subscriber that guessed its numbering wrong)…
    events.slice(2).forEach((e) => store!.recordEvent(e));
    store.flush();
    await writeLogOnly(events);
    store.syncAll();
    expect(store.runEvents('aaaa0001')).toEqual(events);
    expect(store.listRuns(5)[0]).toMatchObject({ adwId: 'aaaa0001', status: 'green', phases: '3/3' });
  });

  it('replays from the run log when the database has not indexed the run yet', async () => {
    store = openTraceStore(ws.paths);
    const events = buildRun('eeee0005', 1_000);
    await writeLogOnly(events);
    expect(fs.existsSync(runLogPath(ws.paths, 'eeee0005'))).toBe(true);
    expect(store.runEvents('eeee0005')).toEqual(events);
    expect(store.listRuns(5)).toEqual([]);
  });
});
