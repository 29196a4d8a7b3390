// The trace store's public contract, free of SQLite: a caller can type against it (and catch TraceStoreError)
// without loading the native addon; `openTraceStore` in store.ts is the one thing to import lazily.
import type { RunEvent } from '../contract/events.js';
import type { Redactor } from '../contract/redact.js';
import type { HarnessRow, PhaseRow, RunRow, SessionRow } from './queries.js';
import { FactoryError } from '../contract/errors.js';

export interface TraceStoreOptions {
  /** One line each: degraded (locked/unwritable), corrupt database moved aside, newer schema. */
  onWarning?: (message: string) => void;
  /** Masks every line ingested from the raw files (harness traces, run logs, ledger) before it becomes a row. */
  redact?: Redactor;
  /** How long a write waits for another process's lock before the store degrades. */
  busyTimeoutMs?: number;
  /** Frequent events (activity, usage) are written in batches: at most this late… */
  batchMs?: number;
  /** …or as soon as this many are waiting. Every other event flushes the batch at once. */
  batchSize?: number;
}

export interface SyncReport {
  /** False when the database could not be written: the raw files still hold everything. */
  ok: boolean;
  events: number;
  harnessLines: number;
  ledgerLines: number;
}

export interface TraceStore {
  readonly file: string;
  /** True after a write failed (locked, unwritable), until a syncAll() or syncRun() succeeds. */
  readonly degraded: boolean;
  /** Live path: cheap (a prepared insert, frequent events batched); never throws. */
  recordEvent(event: RunEvent): void;
  /** Write the pending batch now. */
  flush(): void;
  /** Index a run's log (idempotent); returns the events added. */
  ingestRun(adwId: string): number;
  /** Index the factory-obs harness JSONL (idempotent; a grown file adds its new lines); returns lines added. */
  ingestHarness(): number;
  /** Index the session ledger (idempotent); returns lines added. */
  ingestLedger(): number;
  /** Ledger, harness traces and every run log: catches up after a degraded spell. Never throws. */
  syncAll(): SyncReport;
  /**
   * One run at its end: its log, the ledger and its own sessions' harness traces. A run's close costs the same
   * whether the workspace holds ten runs or ten thousand (syncAll stats every file; readers call that). Never throws.
   * `rewritten`: harness files (names under traces/harness) masked in place at the close, to be read afresh.
   */
  syncRun(adwId: string, opts?: { rewritten?: readonly string[] }): SyncReport;
  /** Most recent first. Reads throw TraceStoreError when the database cannot be opened. */
  listRuns(limit?: number): RunRow[];
  /** The run's events in order, for replay through reduceRun; from the run log when the database has none. */
  runEvents(adwId: string): RunEvent[];
  /** In plan order. */
  phaseRows(adwId: string): PhaseRow[];
  /** The ledger lines of the run (one per declared pi start). */
  sessionRows(adwId: string): SessionRow[];
  /** factory-obs lines of the run's sessions, joined to their phase (view harness_by_phase). */
  harnessRows(adwId: string, phase?: string): HarnessRow[];
  /**
   * Drop a run from the index (`factory clean`, once its raw files are gone): its run, phases and events, the ledger
   * rows and harness lines of its sessions, and what was read of its run log and harness files. Never throws.
   */
  forgetRun(adwId: string, sessionIds: readonly string[]): boolean;
  /** `PRAGMA integrity_check`: "ok" for a sound database. */
  integrityCheck(): string;
  close(): void;
}

/** A read of the trace store failed (the database cannot be opened or read); one line. */
export class TraceStoreError extends FactoryError {
  override readonly name = 'TraceStoreError';
  constructor(message: string) {
    super(message, 'infrastructure');
  }
}
