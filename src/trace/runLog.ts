// The run log: every RunEvent of a run, one JSON line each, in `adws/adw_data/traces/runs/<adw_id>.jsonl`. It is
// the raw source of the trace store (factory.db is an index rebuilt from it), and it stays light on purpose:
// no SQLite here, so that cli/attachTrace.ts can subscribe it before pi starts without paying for the native addon.
import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent, RunEventListener } from '../contract/events.js';
import type { WorkspacePaths } from '../config/paths.js';
import { parseObjectLine, readCompleteLines } from './jsonl.js';

export interface TraceLayout {
  /** `traces/runs`: one run log per ADW run. */
  runsDir: string;
  /** `traces/harness`: factory-obs writes one JSONL per pi session there. */
  harnessDir: string;
  ledgerFile: string;
  /** `adws/adw_data/factory.db`. */
  dbFile: string;
}

export function traceLayout(paths: WorkspacePaths): TraceLayout {
  return {
    runsDir: path.join(paths.dataDir, 'traces', 'runs'),
    harnessDir: paths.harnessTracesDir,
    ledgerFile: paths.ledgerFile,
    dbFile: path.join(paths.dataDir, 'factory.db'),
  };
}

/** A run id reduced to file-name-safe characters (ours are 8 hex digits already). */
export function runLogName(adwId: string): string {
  return `${adwId.replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown-run'}.jsonl`;
}

/** The harness trace of a session, as factory-obs names it (.pi/extensions/factory-obs.ts `tracePath`). */
export function harnessFileName(sessionId: string): string {
  return `${sessionId.replace(/[^A-Za-z0-9._-]/g, '_') || 'unknown-session'}.jsonl`;
}

export function runLogPath(paths: WorkspacePaths, adwId: string): string {
  return path.join(traceLayout(paths).runsDir, runLogName(adwId));
}

export function isRunEvent(value: Record<string, unknown> | undefined): value is Record<string, unknown> & RunEvent {
  return (
    value !== undefined &&
    typeof value.type === 'string' &&
    typeof value.adwId === 'string' &&
    typeof value.ts === 'number'
  );
}

/** Every well-formed event of a run log, in order; torn or foreign lines are skipped. */
export function readRunLog(file: string): RunEvent[] {
  const events: RunEvent[] = [];
  for (const line of readCompleteLines(file).lines) {
    const value = parseObjectLine(line);
    if (isRunEvent(value)) events.push(value);
  }
  return events;
}

/** Ids of the runs that have a run log, by file name. */
export function listRunLogs(paths: WorkspacePaths): string[] {
  try {
    return fs
      .readdirSync(traceLayout(paths).runsDir)
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => n.slice(0, -'.jsonl'.length))
      .sort();
  } catch {
    return [];
  }
}

export interface RunRecorderOptions {
  /** One line per trouble (disk full, unwritable folder); recording never throws into the run. */
  onWarning?: (message: string) => void;
}

export interface RunRecorder {
  listener: RunEventListener;
  /** Flush (fsync) and close every open run log. */
  close(): Promise<void>;
}

/**
 * Appends each event to its run's log with a synchronous write (ordered, visible to a reader at once, cheap),
 * and fsyncs only at run_finished: a crash loses at most the tail of a run whose outcome is unknown anyway.
 */
export function createRunRecorder(paths: WorkspacePaths, opts: RunRecorderOptions = {}): RunRecorder {
  const open = new Map<string, number>();
  const warned = new Set<string>();
  const warn = (adwId: string, message: string) => {
    if (warned.has(adwId)) return;
    warned.add(adwId);
    opts.onWarning?.(message);
  };

  const fdFor = (adwId: string): number => {
    let fd = open.get(adwId);
    if (fd !== undefined) return fd;
    const file = runLogPath(paths, adwId);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fd = fs.openSync(file, 'a+');
    // A log torn by a crash ends mid-line: start on a fresh line so the fragment stays one skipped line
    // instead of swallowing the first event of the resumed run.
    const size = fs.fstatSync(fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) fs.writeSync(fd, '\n');
    }
    open.set(adwId, fd);
    return fd;
  };

  const finish = (adwId: string, sync: boolean) => {
    const fd = open.get(adwId);
    if (fd === undefined) return;
    open.delete(adwId);
    try {
      if (sync) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  };

  const listener: RunEventListener = (event) => {
    try {
      fs.writeSync(fdFor(event.adwId), `${JSON.stringify(event)}\n`);
      if (event.type === 'run_finished') finish(event.adwId, true);
    } catch (error) {
      warn(event.adwId, `trace: run log of ${event.adwId} not written (${(error as Error).message}); the run goes on`);
    }
  };

  return {
    listener,
    close: async () => {
      for (const adwId of [...open.keys()]) {
        try {
          finish(adwId, true);
        } catch (error) {
          warn(adwId, `trace: run log of ${adwId} not flushed (${(error as Error).message})`);
        }
      }
    },
  };
}
