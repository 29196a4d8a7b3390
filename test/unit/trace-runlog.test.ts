// The run log: the raw source of the trace store, one JSON line per RunEvent.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCompleteLines } from '../../src/trace/jsonl.js';
import { createRunRecorder, listRunLogs, readRunLog, runLogPath, traceLayout } from '../../src/trace/runLog.js';
import { buildRun, tempWorkspace, type TempWorkspace } from '../helpers/traceFixtures.js';

let ws: TempWorkspace;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

describe('run log recorder', () => {
  it('writes one line per event under traces/runs/<adw_id>.jsonl and reads them back equal', async () => {
    const events = buildRun('aaaa0001', 1_000);
    const recorder = createRunRecorder(ws.paths);
    events.forEach(recorder.listener);
    await recorder.close();
    const file = runLogPath(ws.paths, 'aaaa0001');
    expect(file).toBe(path.join(ws.paths.dataDir, 'traces', 'runs', 'aaaa0001.jsonl'));
    expect(fs.readFileSync(file, 'utf8').split('\n')).toHaveLength(events.length + 1);
    expect(readRunLog(file)).toEqual(events);
    expect(listRunLogs(ws.paths)).toEqual(['aaaa0001']);
  });

  it('keeps runs apart and leaves a crashed run readable up to its last complete line', async () => {
    const recorder = createRunRecorder(ws.paths);
    const a = buildRun('aaaa0001', 1_000);
    const b = buildRun('bbbb0002', 2_000, 'crash');
    a.forEach((e, i) => {
      recorder.listener(e);
      if (b[i]) recorder.listener(b[i]!);
    });
    await recorder.close();
    // A crash mid-write tears the last line of b.
    fs.appendFileSync(runLogPath(ws.paths, 'bbbb0002'), '{"type":"usage","adwId":"bbbb0002","ts":9,"pha');
    expect(readRunLog(runLogPath(ws.paths, 'aaaa0001'))).toEqual(a);
    expect(readRunLog(runLogPath(ws.paths, 'bbbb0002'))).toEqual(b);
  });

  it('starts a resumed run on a fresh line after a torn one, losing no event', async () => {
    const before = buildRun('cccc0003', 1_000, 'crash');
    const first = createRunRecorder(ws.paths);
    before.forEach(first.listener);
    await first.close();
    fs.appendFileSync(runLogPath(ws.paths, 'cccc0003'), '{"type":"activity","adwId":"cc');
    const after = buildRun('cccc0003', 5_000, 'green');
    const second = createRunRecorder(ws.paths);
    after.forEach(second.listener);
    await second.close();
    expect(readRunLog(runLogPath(ws.paths, 'cccc0003'))).toEqual([...before, ...after]);
  });

  it('never throws into the run when the log cannot be written: one warning per run', async () => {
    // A file where the runs folder should be: every write fails.
    fs.mkdirSync(path.dirname(traceLayout(ws.paths).runsDir), { recursive: true });
    fs.writeFileSync(traceLayout(ws.paths).runsDir, 'not a folder');
    const warnings: string[] = [];
    const recorder = createRunRecorder(ws.paths, { onWarning: (m) => warnings.push(m) });
    expect(() => buildRun('dddd0004', 1_000).forEach(recorder.listener)).not.toThrow();
    await recorder.close();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/run log of dddd0004 not written/);
  });
});

describe('readCompleteLines', () => {
  it('reads only complete lines, resumes from an offset, and reports a shrunk file', () => {
    const file = path.join(ws.paths.root, 'x.jsonl');
    fs.writeFileSync(file, '{"a":1}\n{"b":"\u2028 inside"}\r\n{"c":');
    const first = readCompleteLines(file);
    expect(first.lines).toEqual(['{"a":1}', '{"b":"\u2028 inside"}']);
    fs.appendFileSync(file, '3}\n');
    const second = readCompleteLines(file, first.next);
    expect(second.lines).toEqual(['{"c":3}']);
    expect(readCompleteLines(file, second.next).lines).toEqual([]);
    fs.writeFileSync(file, '{}\n');
    expect(readCompleteLines(file, second.next).shrunk).toBe(true);
    expect(readCompleteLines(path.join(ws.paths.root, 'missing.jsonl'))).toEqual({ lines: [], next: 0, shrunk: false });
  });
});
