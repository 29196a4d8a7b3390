// One redactor for the trace: what the cockpit ingests into factory.db is masked, and a finished run's own files
// (harness traces, pi's stderr log, harvest.json) are masked in place at its close, the index then reading them
// afresh. The secret here is one only the cockpit knows (its real environment), as factory-obs could not mask it.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/contract/redact.js';
import { Run } from '../../src/engine/runner.js';
import { attachTrace } from '../../src/cli/attachTrace.js';
import { createRunRecorder } from '../../src/trace/runLog.js';
import { rewriteIfChanged, scrubJson, scrubJsonl, scrubRun } from '../../src/trace/scrub.js';
import { openTraceStore, type TraceStore } from '../../src/trace/store.js';
import { redactDeep } from '../../src/contract/redact.js';
import {
  appendHarness,
  buildRun,
  declare,
  harnessFile,
  obsLine,
  outside,
  tempWorkspace,
  type TempWorkspace,
} from '../helpers/traceFixtures.js';

const TOKEN = 'cockpit-only-token-9f8e7d';
const redact = createRedactor([{ name: 'SENTINEL_TOKEN', value: TOKEN }]);
const MASK = '«redacted:SENTINEL_TOKEN»';

let ws: TempWorkspace;
let store: TraceStore | undefined;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => {
  store?.close();
  store = undefined;
  ws.cleanup();
});

/** Every row of every table, as one string. */
function dump(): string {
  const db = outside(ws.paths);
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    return tables.map((t) => JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).all())).join('\n');
  } finally {
    db.close();
  }
}

describe('ingestion masks every line', () => {
  it('harness lines, ledger fields and run-log events reach factory.db masked, numbers intact', async () => {
    declare(ws.paths, 's1', 'aaaa0001', 'build');
    appendHarness(
      ws.paths,
      's1',
      `${obsLine('s1', 'aaaa0001', 'build', 'tool_start', { args: { command: `echo ${TOKEN}` }, n: 123456 })}\n`,
    );
    // A run log line with the secret (as `factory apply` or an older factory could leave one).
    const events = buildRun('aaaa0001', 1_000).map((e) =>
      e.type === 'attempt_failed' ? { ...e, motif: `401: bad key ${TOKEN}` } : e,
    );
    const recorder = createRunRecorder(ws.paths);
    events.forEach(recorder.listener);
    await recorder.close();
    store = openTraceStore(ws.paths, { redact });
    expect(store.syncAll().ok).toBe(true);
    const text = dump();
    expect(text).not.toContain(TOKEN);
    expect(text).toContain(`echo ${MASK}`);
    expect(text).toContain(`401: bad key ${MASK}`);
    const [row] = store.harnessRows('aaaa0001');
    expect(row!.record).toMatchObject({ n: 123456 });
  });
});

describe('scrubbing files in place', () => {
  it('rewrites only what changes, atomically, keeping the mode; JSON stays JSON', () => {
    const dir = ws.paths.root;
    const jsonl = path.join(dir, 't.jsonl');
    fs.writeFileSync(
      jsonl,
      `${JSON.stringify({ ts: 1, a: `x ${TOKEN}` })}\n${JSON.stringify({ ts: 2 })}\n{"torn": "${TOKEN}`,
      { mode: 0o640 },
    );
    expect(scrubJsonl(jsonl, redact)).toBe(true);
    const lines = fs.readFileSync(jsonl, 'utf8').split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ ts: 1, a: `x ${MASK}` });
    expect(lines[1]).toBe(JSON.stringify({ ts: 2 }));
    expect(lines[2]).toBe(`{"torn": "${MASK}`);
    expect(fs.statSync(jsonl).mode & 0o777).toBe(0o640);
    // Clean now: nothing more to do, and no temp file left behind.
    expect(scrubJsonl(jsonl, redact)).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.scrub'))).toEqual([]);
    const harvest = path.join(dir, 'harvest.json');
    fs.writeFileSync(harvest, `${JSON.stringify({ arms: [{ motif: `crashed: ${TOKEN}`, tokens: 1 }] }, null, 2)}\n`);
    expect(scrubJson(harvest, redact)).toBe(true);
    expect(fs.readFileSync(harvest, 'utf8')).toBe(
      `${JSON.stringify({ arms: [{ motif: `crashed: ${MASK}`, tokens: 1 }] }, null, 2)}\n`,
    );
    expect(rewriteIfChanged(path.join(dir, 'absent'), () => 'x')).toBe(false);
  });

  it("masks the run's harness traces, stderr logs and harvest.json, not another run's", () => {
    declare(ws.paths, 'mine', 'aaaa0001', 'build');
    declare(ws.paths, 'theirs', 'bbbb0002', 'build');
    for (const id of ['mine', 'theirs'])
      appendHarness(ws.paths, id, `${obsLine(id, 'x', 'build', 'tool_start', { args: TOKEN })}\n`);
    fs.writeFileSync(path.join(ws.paths.sessionsDir, 'mine.stderr.log'), `Error: 401 key ${TOKEN}\n`);
    const bonDir = path.join(ws.paths.dataDir, 'bon', 'aaaa0001');
    fs.mkdirSync(bonDir, { recursive: true });
    fs.writeFileSync(path.join(bonDir, 'harvest.json'), `${JSON.stringify({ motif: TOKEN }, null, 2)}\n`);
    const report = scrubRun(ws.paths, 'aaaa0001', redact);
    expect(report.harness).toEqual(['mine.jsonl']);
    expect(report.files).toHaveLength(3);
    expect(report.failed).toEqual([]);
    expect(fs.readFileSync(harnessFile(ws.paths, 'mine'), 'utf8')).not.toContain(TOKEN);
    expect(fs.readFileSync(path.join(ws.paths.sessionsDir, 'mine.stderr.log'), 'utf8')).toBe(
      `Error: 401 key ${MASK}\n`,
    );
    expect(fs.readFileSync(path.join(bonDir, 'harvest.json'), 'utf8')).not.toContain(TOKEN);
    expect(fs.readFileSync(harnessFile(ws.paths, 'theirs'), 'utf8')).toContain(TOKEN);
  });

  it('a file a reader indexed raw before the close is read afresh once rewritten: no raw row is left', () => {
    declare(ws.paths, 's1', 'aaaa0001', 'build');
    const lines = [0, 1, 2].map((i) => obsLine('s1', 'aaaa0001', 'build', 'tool_start', { i, args: `k=${TOKEN}` }));
    appendHarness(ws.paths, 's1', `${lines.join('\n')}\n`);
    // `factory runs` in another shell, mid-run, without the cockpit's credential: its rows hold the value.
    store = openTraceStore(ws.paths);
    store.syncAll();
    store.close();
    expect(dump()).toContain(TOKEN);
    const report = scrubRun(ws.paths, 'aaaa0001', redact);
    expect(report.harness).toEqual(['s1.jsonl']);
    store = openTraceStore(ws.paths, { redact });
    store.syncRun('aaaa0001', { rewritten: report.harness });
    expect(store.harnessRows('aaaa0001').map((r) => r.record.i)).toEqual([0, 1, 2]);
    expect(dump()).not.toContain(TOKEN);
    // Nor in the file's bytes: the rows deleted to be read afresh were overwritten, not merely unlinked.
    store.close();
    store = undefined;
    const dbFile = path.join(ws.paths.dataDir, 'factory.db');
    for (const file of [dbFile, `${dbFile}-wal`])
      if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(TOKEN), file).toBe(false);
  });
});

describe('the close of a run', () => {
  it('attachTrace masks the run files with run.redact, then indexes them', async () => {
    const run = new Run('adw_build', ws.paths.root, 'aaaa0001');
    run.redact = (value) => redactDeep(redact, value);
    const trace = attachTrace(run, ws.paths, () => {});
    declare(ws.paths, 's1', 'aaaa0001', 'build');
    appendHarness(
      ws.paths,
      's1',
      `${obsLine('s1', 'aaaa0001', 'build', 'message_end', { error_message: `401 ${TOKEN}` })}\n`,
    );
    for (const e of buildRun('aaaa0001', 1_000))
      run.emit(e.type === 'attempt_failed' ? { ...e, motif: `bad ${TOKEN}` } : e);
    await trace.close();
    expect(fs.readFileSync(harnessFile(ws.paths, 's1'), 'utf8')).toContain(`401 ${MASK}`);
    const log = fs.readFileSync(path.join(ws.paths.dataDir, 'traces', 'runs', 'aaaa0001.jsonl'), 'utf8');
    expect(log).toContain(`bad ${MASK}`);
    const text = dump();
    expect(text).not.toContain(TOKEN);
    expect(text).toContain(`401 ${MASK}`);
  });
});
