// The trace store: `adws/adw_data/factory.db`, an SQLite index (WAL, busy_timeout, small IMMEDIATE transactions,
// versioned schema) over the raw traces: run logs, factory-obs harness JSONL and the session ledger.
//
// It never aborts a run. A database that is locked beyond busy_timeout or unwritable turns the store "degraded":
// ONE warning, then live events are no longer written (the run log, written by the recorder, is the spill) until
// the next syncAll() catches up from the raw files. A corrupt database (not a database, malformed) is moved aside as
// `factory.db.corrupt-<ts>` (with its -wal/-shm) and rebuilt from the raw traces, with a warning.
//
// Importing this module loads better-sqlite3 (a native addon): the CLI imports it lazily, after pi is spawned or
// at run end; the run log recorder (runLog.ts) has no such cost.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { RunEvent, RunEventType } from '../contract/events.js';
import type { WorkspacePaths } from '../config/paths.js';
import { EventFolder } from './fold.js';
import { forgetRunRows } from './forget.js';
import { Ingestor } from './ingest.js';
import { TraceQueries, type HarnessRow, type PhaseRow, type RunRow, type SessionRow } from './queries.js';
import { listRunLogs, readRunLog, runLogPath, traceLayout, type TraceLayout } from './runLog.js';
import { migrate } from './schema.js';
import { describe, isCorruptionError } from './storeErrors.js';
import { TraceStoreError, type SyncReport, type TraceStore, type TraceStoreOptions } from './types.js';

export type { HarnessRow, PhaseRow, RunRow, SessionRow } from './queries.js';
export type { RunStatus } from './fold.js';
export { isCorruptionError } from './storeErrors.js';
export { TraceStoreError, type SyncReport, type TraceStore, type TraceStoreOptions } from './types.js';

// better-sqlite3 is CommonJS: required, not imported. An ESM import of a CommonJS module makes Node run its export
// lexer over the module and everything it re-exports first (~10 ms of CPU while pi starts); require() gives the
// very same module.exports without it.
const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

const FREQUENT: ReadonlySet<RunEventType> = new Set(['activity', 'usage']);

interface Connection {
  db: BetterSqlite3.Database;
  folder: EventFolder;
  ingestor: Ingestor;
  queries: TraceQueries;
  applyBatch: (items: Pending[]) => void;
}

interface Pending {
  seq: number;
  event: RunEvent;
  payload: string;
}

class SqliteTraceStore implements TraceStore {
  readonly file: string;
  private readonly layout: TraceLayout;
  private conn: Connection | undefined;
  /** A handle on a file found damaged at open, kept open until the file is moved aside. */
  private damaged: BetterSqlite3.Database | undefined;
  private degradedFlag = false;
  private unavailableWarned = false;
  private closed = false;
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** adw_id → next seq for live events; reset whenever the tables may have been rewritten. */
  private readonly seqs = new Map<string, number>();
  private readonly busyTimeoutMs: number;
  private readonly batchMs: number;
  private readonly batchSize: number;

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly opts: TraceStoreOptions,
  ) {
    this.layout = traceLayout(paths);
    this.file = this.layout.dbFile;
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 1500;
    this.batchMs = opts.batchMs ?? 250;
    this.batchSize = opts.batchSize ?? 64;
  }

  get degraded(): boolean {
    return this.degradedFlag;
  }

  // -- connection lifecycle ---------------------------------------------------------------------

  private openConnection(): Connection {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const db = new Database(this.file, { timeout: this.busyTimeoutMs });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Rows replaced because they were read before their file was masked must not live on in free pages.
      db.pragma('secure_delete = ON');
      const outcome = migrate(db);
      if ('newer' in outcome)
        this.warn(
          `trace: factory.db has schema version ${outcome.from}, newer than this factory knows; using it as it is`,
        );
      const folder = new EventFolder(db);
      const applyBatch = db.transaction((items: Pending[]) => {
        for (const item of items) folder.apply(item.seq, item.event, item.payload);
        // This process records these runs live: it owns them until they finish.
        for (const adwId of new Set(items.map((i) => i.event.adwId))) folder.claim(adwId, process.pid);
      });
      return {
        db,
        folder,
        ingestor: new Ingestor(db, folder, this.layout, this.opts.redact),
        queries: new TraceQueries(db),
        applyBatch: (items) => applyBatch.immediate(items),
      };
    } catch (error) {
      // A damaged file stays open until it is moved aside: closing it first would let SQLite delete its -wal.
      if (isCorruptionError(error)) this.damaged = db;
      else db.close();
      throw error;
    }
  }

  /** The open connection, opening (or recovering) it when needed; undefined when the database is out of reach. */
  private connect(): Connection | undefined {
    if (this.conn) return this.conn;
    try {
      this.conn = this.openConnection();
      return this.conn;
    } catch (error) {
      if (isCorruptionError(error)) return this.recover(error);
      this.degrade(error);
      return undefined;
    }
  }

  private closeConnection(): void {
    const handles = [this.conn?.db, this.damaged];
    this.conn = undefined;
    this.damaged = undefined;
    for (const db of handles) {
      try {
        db?.close();
      } catch {
        // a broken handle: nothing more to release
      }
    }
  }

  /** Move the damaged file (and its -wal/-shm) aside, start a fresh database and rebuild it from the raw traces. */
  private recover(cause: unknown): Connection | undefined {
    this.seqs.clear();
    this.queue = [];
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    let aside = `${this.file}.corrupt-${stamp}`;
    for (let n = 2; fs.existsSync(aside); n += 1) aside = `${this.file}.corrupt-${stamp}-${n}`;
    try {
      for (const suffix of ['', '-wal', '-shm']) {
        if (fs.existsSync(this.file + suffix)) fs.renameSync(this.file + suffix, aside + suffix);
      }
      // Closed only now, under their new names: SQLite removes a -wal it owns when the last handle closes.
      this.closeConnection();
      this.conn = this.openConnection();
      const report = this.catchUp(this.conn);
      this.warn(
        `trace: factory.db was damaged (${describe(cause)}); moved aside to ${path.basename(aside)} and rebuilt from the raw traces ` +
          `(${listRunLogs(this.paths).length} runs, ${report.harnessLines} harness lines, ${report.ledgerLines} ledger lines)`,
      );
      this.degradedFlag = false;
      return this.conn;
    } catch (error) {
      this.closeConnection();
      this.degrade(error);
      return undefined;
    }
  }

  private warn(message: string): void {
    try {
      this.opts.onWarning?.(message);
    } catch {
      // a failing warning sink must not break the run either
    }
  }

  private degrade(error: unknown): void {
    this.degradedFlag = true;
    this.queue = [];
    if (this.unavailableWarned) return;
    this.unavailableWarned = true;
    this.warn(
      `trace: factory.db not written (${describe(error)}); the run goes on, its run log will be indexed at the next sync`,
    );
  }

  /** Run a write; any failure degrades the store (corruption: recover first, then retry once if asked). */
  private write<T>(fn: (c: Connection) => T, fallback: T, retryAfterRecovery: boolean): T {
    const conn = this.connect();
    if (!conn) return fallback;
    try {
      return fn(conn);
    } catch (error) {
      if (!isCorruptionError(error)) {
        this.degrade(error);
        return fallback;
      }
      const fresh = this.recover(error);
      if (!fresh || !retryAfterRecovery) return fallback;
      try {
        return fn(fresh);
      } catch (again) {
        this.degrade(again);
        return fallback;
      }
    }
  }

  private read<T>(fn: (c: Connection) => T): T {
    const conn = this.connect();
    if (!conn) throw new TraceStoreError(`trace store unavailable: ${this.file}`);
    try {
      return fn(conn);
    } catch (error) {
      if (isCorruptionError(error)) {
        const fresh = this.recover(error);
        if (fresh) {
          try {
            return fn(fresh);
          } catch (again) {
            throw new TraceStoreError(`trace store: ${describe(again)}`);
          }
        }
      }
      throw new TraceStoreError(`trace store: ${describe(error)}`);
    }
  }

  // -- live path ----------------------------------------------------------------------------------

  recordEvent(event: RunEvent): void {
    if (this.closed || this.degradedFlag) return;
    const payload = JSON.stringify(event);
    let seq = this.seqs.get(event.adwId);
    if (seq === undefined) {
      // First event of this run seen here: index what its run log already holds (a resumed run, a store opened
      // late, a recorder subscribed first) so live numbering continues the log's.
      const start = this.write((c) => this.firstSeq(c, event.adwId, payload), undefined, false);
      if (start === undefined) return;
      if (start.stored) {
        this.seqs.set(event.adwId, start.next);
        return;
      }
      seq = start.next;
    }
    this.seqs.set(event.adwId, seq + 1);
    this.queue.push({ seq, event, payload });
    if (!FREQUENT.has(event.type) || this.queue.length >= this.batchSize) this.flush();
    else this.schedule();
  }

  private firstSeq(c: Connection, adwId: string, payload: string): { next: number; stored: boolean } {
    c.ingestor.ingestRun(adwId);
    // Claimed the moment this cockpit first sees the run live: a SIGKILL before the next batch still leaves a run
    // whose owner is known (and dead), so it reads as interrupted.
    c.folder.claim(adwId, process.pid);
    const next = c.folder.nextSeq(adwId);
    return { next, stored: next > 0 && c.folder.storedPayload(adwId, next - 1) === payload };
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.batchMs);
    this.timer.unref();
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queue.length === 0 || this.degradedFlag) return;
    const batch = this.queue;
    this.queue = [];
    // After a recovery the batch is not replayed: the rebuild read it from the run log.
    this.write((c) => c.applyBatch(batch), undefined, false);
  }

  // -- ingestion ------------------------------------------------------------------------------------

  ingestRun(adwId: string): number {
    return this.write((c) => c.ingestor.ingestRun(adwId), 0, true);
  }

  ingestHarness(): number {
    return this.write((c) => c.ingestor.ingestHarness(), 0, true);
  }

  ingestLedger(): number {
    return this.write((c) => c.ingestor.ingestLedger(), 0, true);
  }

  private catchUp(c: Connection): SyncReport {
    const ledgerLines = c.ingestor.ingestLedger();
    const harnessLines = c.ingestor.ingestHarness();
    const events = c.ingestor.ingestRuns(listRunLogs(this.paths));
    return { ok: true, events, harnessLines, ledgerLines };
  }

  syncAll(): SyncReport {
    return this.sync((c) => this.catchUp(c));
  }

  syncRun(adwId: string, opts: { rewritten?: readonly string[] } = {}): SyncReport {
    const rewritten = new Set(opts.rewritten ?? []);
    return this.sync((c) => {
      const ledgerLines = c.ingestor.ingestLedger();
      const harnessLines = c.ingestor.ingestHarnessOfRun(adwId, rewritten);
      return { ok: true, events: c.ingestor.ingestRun(adwId), harnessLines, ledgerLines };
    });
  }

  private sync(catchUp: (c: Connection) => SyncReport): SyncReport {
    const failed: SyncReport = { ok: false, events: 0, harnessLines: 0, ledgerLines: 0 };
    if (this.closed) return failed;
    this.flush();
    // A degraded store tries again here; live numbering restarts from what the tables then hold.
    this.degradedFlag = false;
    this.seqs.clear();
    const report = this.write(catchUp, failed, true);
    if (report.ok && !this.degradedFlag) this.unavailableWarned = false;
    return this.degradedFlag ? failed : report;
  }

  forgetRun(adwId: string, sessionIds: readonly string[]): boolean {
    this.flush();
    return this.write((c) => forgetRunRows(c.db, adwId, sessionIds), false, false);
  }

  // -- reads ----------------------------------------------------------------------------------------

  listRuns(limit = 50): RunRow[] {
    return this.read((c) => c.queries.listRuns(limit));
  }

  runEvents(adwId: string): RunEvent[] {
    let stored: RunEvent[] = [];
    try {
      stored = this.read((c) => c.queries.runEvents(adwId));
    } catch (error) {
      if (!(error instanceof TraceStoreError)) throw error;
    }
    return stored.length > 0 ? stored : readRunLog(runLogPath(this.paths, adwId));
  }

  phaseRows(adwId: string): PhaseRow[] {
    return this.read((c) => c.queries.phaseRows(adwId));
  }

  sessionRows(adwId: string): SessionRow[] {
    return this.read((c) => c.queries.sessionRows(adwId));
  }

  harnessRows(adwId: string, phase?: string): HarnessRow[] {
    return this.read((c) => c.queries.harnessRows(adwId, phase));
  }

  integrityCheck(): string {
    return this.read((c) => String(c.db.pragma('integrity_check', { simple: true })));
  }

  /** Connect now (see openTraceStore). */
  open(): void {
    this.connect();
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.closeConnection();
  }
}

/** Open (creating or migrating) the trace store of a workspace. Never throws: trouble degrades it, with a warning. */
export function openTraceStore(paths: WorkspacePaths, opts: TraceStoreOptions = {}): TraceStore {
  const store = new SqliteTraceStore(paths, opts);
  // Open now so a damaged file is recovered (and warned about) up front rather than at the first event.
  store.open();
  return store;
}
