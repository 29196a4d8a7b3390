// The trace store never aborts a run: a locked or unwritable database degrades to the run log (one warning) and
// the next sync catches up; a corrupt one is moved aside and rebuilt from the raw traces.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contract/events.js';
import { createRunRecorder, readRunLog, runLogPath, traceLayout } from '../../src/trace/runLog.js';
import { openTraceStore, TraceStoreError, type TraceStore } from '../../src/trace/store.js';
import {
  appendHarness,
  buildRun,
  declare,
  obsLine,
  outside,
  tempWorkspace,
  type TempWorkspace,
} from '../helpers/traceFixtures.js';

let ws: TempWorkspace;
let store: TraceStore | undefined;
let warnings: string[];
beforeEach(() => {
  ws = tempWorkspace();
  warnings = [];
});
afterEach(() => {
  store?.close();
  store = undefined;
  ws.cleanup();
});

const onWarning = (m: string) => warnings.push(m);
const dbFile = () => traceLayout(ws.paths).dbFile;

async function live(events: RunEvent[], s: TraceStore): Promise<void> {
  const recorder = createRunRecorder(ws.paths);
  for (const e of events) {
    recorder.listener(e);
    s.recordEvent(e);
  }
  await recorder.close();
}

/** Raw traces of two finished runs: run logs, ledger, harness lines. */
async function rawTraces(): Promise<RunEvent[][]> {
  const runs = [buildRun('aaaa0001', 1_000), buildRun('bbbb0002', 2_000, 'failed')];
  const recorder = createRunRecorder(ws.paths);
  runs.flat().forEach(recorder.listener);
  await recorder.close();
  for (const id of ['aaaa0001', 'bbbb0002']) {
    declare(ws.paths, `sess-${id}`, id, 'build');
    appendHarness(
      ws.paths,
      `sess-${id}`,
      ['session_start', 'tool_start', 'tool_end', 'message_end']
        .map((t) => obsLine(`sess-${id}`, id, 'build', t))
        .join('\n') + '\n',
    );
  }
  return runs;
}

function asideFiles(): string[] {
  return fs.readdirSync(path.dirname(dbFile())).filter((n) => n.startsWith('factory.db.corrupt-'));
}

describe('trace store under a lock', () => {
  it('a write lock held beyond busy_timeout: the run goes on, one warning, the next sync catches up', async () => {
    store = openTraceStore(ws.paths, { onWarning, busyTimeoutMs: 30 });
    const events = buildRun('aaaa0001', 1_000);
    const other = outside(ws.paths);
    other.exec('BEGIN EXCLUSIVE');
    try {
      await live(events, store);
      store.flush();
      expect(store.degraded).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/factory\.db not written \(SQLITE_BUSY.*the run goes on/);
      // Still locked: the sync fails quietly (no second warning) and reports it.
      expect(store.syncAll().ok).toBe(false);
      expect(warnings).toHaveLength(1);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Nothing was lost: the run log held every event.
    expect(readRunLog(runLogPath(ws.paths, 'aaaa0001'))).toEqual(events);
    expect(store.syncAll()).toMatchObject({ ok: true, events: events.length });
    expect(store.degraded).toBe(false);
    expect(store.runEvents('aaaa0001')).toEqual(events);
    expect(store.listRuns(5)[0]).toMatchObject({ adwId: 'aaaa0001', status: 'green', phases: '3/3', tokens: 1600 });
    expect(store.integrityCheck()).toBe('ok');
  });

  it('opens on a database another process holds locked, and records again after the sync', async () => {
    openTraceStore(ws.paths).close(); // create it
    const other = outside(ws.paths);
    other.exec('BEGIN EXCLUSIVE');
    const first = buildRun('aaaa0001', 1_000);
    try {
      store = openTraceStore(ws.paths, { onWarning, busyTimeoutMs: 30 });
      await live(first, store);
      expect(warnings).toHaveLength(1);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    store.syncAll();
    // Live recording works again for the next run, numbered right after the sync.
    const second = buildRun('bbbb0002', 5_000);
    await live(second, store);
    store.flush();
    expect(store.runEvents('aaaa0001')).toEqual(first);
    expect(store.runEvents('bbbb0002')).toEqual(second);
    expect(store.syncAll().events).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(store.integrityCheck()).toBe('ok');
  });
});

describe('trace store that cannot be written at all', () => {
  it('degrades with one warning; replay falls back to the run log; reads say why in one line', async () => {
    // A folder where the database file should be: SQLite cannot open it.
    fs.mkdirSync(dbFile(), { recursive: true });
    store = openTraceStore(ws.paths, { onWarning });
    const events = buildRun('aaaa0001', 1_000);
    await expect(live(events, store)).resolves.toBeUndefined();
    expect(store.syncAll().ok).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/factory\.db not written .*the run goes on/);
    expect(store.runEvents('aaaa0001')).toEqual(events);
    expect(() => store!.listRuns()).toThrow(TraceStoreError);
  });
});

describe('corrupt trace store', () => {
  it('a file that is not a database is moved aside (with its -wal/-shm) and rebuilt from the raw traces', async () => {
    const runs = await rawTraces();
    fs.mkdirSync(path.dirname(dbFile()), { recursive: true });
    fs.writeFileSync(dbFile(), Buffer.from('garbage bytes, not SQLite at all '.repeat(200)));
    fs.writeFileSync(`${dbFile()}-wal`, Buffer.from('more garbage'));
    store = openTraceStore(ws.paths, { onWarning });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /factory\.db was damaged \(SQLITE_NOTADB.*moved aside to factory\.db\.corrupt-.* rebuilt from the raw traces \(2 runs, 8 harness lines, 2 ledger lines\)/,
    );
    const [aside, ...more] = asideFiles().filter((n) => !/-(wal|shm)$/.test(n));
    expect(more).toEqual([]);
    const dir = path.dirname(dbFile());
    expect(fs.readFileSync(path.join(dir, aside!), 'utf8')).toMatch(/^garbage bytes/);
    expect(fs.readFileSync(path.join(dir, `${aside}-wal`), 'utf8')).toBe('more garbage');
    // Nothing lost.
    expect(store.listRuns(5).map((r) => [r.adwId, r.status])).toEqual([
      ['bbbb0002', 'failed'],
      ['aaaa0001', 'green'],
    ]);
    expect(store.runEvents('aaaa0001')).toEqual(runs[0]);
    expect(store.runEvents('bbbb0002')).toEqual(runs[1]);
    expect(store.harnessRows('aaaa0001', 'build')).toHaveLength(4);
    expect(store.sessionRows('bbbb0002')).toHaveLength(1);
    expect(store.integrityCheck()).toBe('ok');
  });

  it('malformed pages found while running are recovered the same way, and the run is recorded', async () => {
    await rawTraces();
    store = openTraceStore(ws.paths, { onWarning });
    store.syncAll();
    store.close();
    // Keep the header page, scribble over every other page (the tables' b-trees).
    const size = fs.statSync(dbFile()).size;
    const fd = fs.openSync(dbFile(), 'r+');
    fs.writeSync(fd, Buffer.alloc(size - 4096, 0x5a), 0, size - 4096, 4096);
    fs.closeSync(fd);
    store = openTraceStore(ws.paths, { onWarning });
    expect(warnings).toEqual([]); // the header alone looks fine
    const third = buildRun('cccc0003', 9_000);
    await live(third, store);
    store.flush();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/factory\.db was damaged \(SQLITE_CORRUPT/);
    expect(asideFiles().filter((n) => !/-(wal|shm)$/.test(n))).toHaveLength(1);
    expect(store.listRuns(5).map((r) => r.adwId)).toEqual(['cccc0003', 'bbbb0002', 'aaaa0001']);
    expect(store.runEvents('cccc0003')).toEqual(third);
    expect(store.harnessRows('bbbb0002')).toHaveLength(4);
    expect(store.integrityCheck()).toBe('ok');
  });
});
