// Ingestion of the raw traces into factory.db: run logs (RunEvents), factory-obs harness JSONL (one file per pi
// session) and the session ledger. Each source remembers, in `ingest_sources`, how far it was read (bytes through
// its last complete line) in the same IMMEDIATE transaction as the rows: re-ingesting adds nothing, a file that
// grew adds only its new lines, and two processes ingesting at once serialize on the write lock.
// Every line is masked with the ingesting process's redactor before it becomes a row: factory.db never holds what
// the raw file held unmasked (a trace written before its run's close, a log written by an older factory).
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { redactDeep, redactJsonLine, type Redactor } from '../contract/redact.js';
import type { EventFolder } from './fold.js';
import { parseObjectLine, readCompleteLines } from './jsonl.js';
import { harnessFileName, isRunEvent, runLogName, type TraceLayout } from './runLog.js';

interface SourceState {
  offset: number;
  count: number;
}

export class Ingestor {
  private readonly getSource;
  private readonly putSource;
  private readonly insertHarness;
  private readonly deleteHarness;
  private readonly insertSession;
  private readonly deleteSessions;
  private readonly sessionsOfRun;

  constructor(
    private readonly db: Database.Database,
    private readonly folder: EventFolder,
    private readonly layout: TraceLayout,
    private readonly redact: Redactor = (text) => text,
  ) {
    this.getSource = db.prepare('SELECT offset, count FROM ingest_sources WHERE source = ?');
    this.putSource = db.prepare(`
      INSERT INTO ingest_sources (source, offset, count) VALUES (?, ?, ?)
      ON CONFLICT (source) DO UPDATE SET offset = excluded.offset, count = excluded.count`);
    this.insertHarness = db.prepare(
      'INSERT OR IGNORE INTO harness_events (session_id, line_no, ts, type, payload) VALUES (?, ?, ?, ?, ?)',
    );
    this.deleteHarness = db.prepare('DELETE FROM harness_events WHERE session_id = ?');
    this.insertSession = db.prepare(`
      INSERT OR IGNORE INTO sessions (line_no, session_id, adw_id, phase, cwd, model, declared_at, reason)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.deleteSessions = db.prepare('DELETE FROM sessions');
    this.sessionsOfRun = db.prepare('SELECT DISTINCT session_id FROM sessions WHERE adw_id = ?');
  }

  private state(source: string): SourceState {
    return (this.getSource.get(source) as SourceState | undefined) ?? { offset: 0, count: 0 };
  }

  /** True when the file's size is exactly what was already read: no transaction needed. */
  private unchanged(source: string, file: string): boolean {
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return true;
    }
    return size === this.state(source).offset;
  }

  /**
   * The new events of a run log. Events already in the table (recorded live) must be the same ones at the same
   * seq; if they are not (a cockpit that subscribed late, a log rewritten), the run is rebuilt from its log,
   * which is the source of truth. Returns how many events were added.
   */
  ingestRun(adwId: string): number {
    const name = runLogName(adwId);
    const source = `runs/${name}`;
    const file = path.join(this.layout.runsDir, name);
    if (this.unchanged(source, file)) return 0;
    const tx = this.db.transaction((): number => {
      const at = this.state(source);
      const chunk = readCompleteLines(file, at.offset);
      if (!chunk.shrunk) {
        const outcome = this.applyRunLines(adwId, chunk.lines, at.count);
        if (outcome !== 'conflict') {
          this.putSource.run(source, chunk.next, outcome.seq);
          return outcome.added;
        }
      }
      this.folder.deleteRun(adwId);
      const whole = readCompleteLines(file, 0);
      const rebuilt = this.applyRunLines(adwId, whole.lines, 0);
      // A fresh table cannot conflict with itself.
      const seq = rebuilt === 'conflict' ? 0 : rebuilt.seq;
      this.putSource.run(source, whole.next, seq);
      return seq;
    });
    return tx.immediate();
  }

  private applyRunLines(adwId: string, lines: string[], firstSeq: number): { added: number; seq: number } | 'conflict' {
    let seq = firstSeq;
    let added = 0;
    for (const line of lines) {
      // A line without a secret (the rule: the run log is written from masked events) is parsed as it is.
      const parsed = parseObjectLine(line);
      const value = parsed && this.redact(line) !== line ? redactDeep(this.redact, parsed) : parsed;
      if (!isRunEvent(value) || value.adwId !== adwId) continue;
      const payload = JSON.stringify(value);
      if (this.folder.apply(seq, value, payload)) added += 1;
      else if (this.folder.storedPayload(adwId, seq) !== payload) return 'conflict';
      seq += 1;
    }
    return { added, seq };
  }

  /** Every run log under traces/runs; returns how many events were added. */
  ingestRuns(adwIds: string[]): number {
    let added = 0;
    for (const id of adwIds) added += this.ingestRun(id);
    return added;
  }

  /** Every factory-obs file; returns how many lines were added. */
  ingestHarness(): number {
    let names: string[];
    try {
      names = fs
        .readdirSync(this.layout.harnessDir)
        .filter((n) => n.endsWith('.jsonl'))
        .sort();
    } catch {
      return 0;
    }
    let added = 0;
    for (const name of names) added += this.ingestHarnessFile(name);
    return added;
  }

  /**
   * The harness files of one run's sessions (as the ledger names them: primer, arms, retries, fallbacks).
   * Call after ingestLedger. A session without a file (pi never started) adds nothing. `rewritten`: files
   * (names under traces/harness) replaced since they may have been read (masked at the run's close): read
   * afresh, since an offset into the old bytes means nothing in the new ones.
   */
  ingestHarnessOfRun(adwId: string, rewritten: ReadonlySet<string> = new Set()): number {
    const ids = this.sessionsOfRun.all(adwId) as { session_id: string }[];
    let added = 0;
    for (const { session_id: id } of ids) {
      const name = harnessFileName(id);
      if (fs.existsSync(path.join(this.layout.harnessDir, name)))
        added += this.ingestHarnessFile(name, rewritten.has(name));
    }
    return added;
  }

  private ingestHarnessFile(name: string, rewritten = false): number {
    const source = `harness/${name}`;
    const file = path.join(this.layout.harnessDir, name);
    const stem = name.slice(0, -'.jsonl'.length);
    if (!rewritten && this.unchanged(source, file)) return 0;
    const tx = this.db.transaction((): number => {
      let at = this.state(source);
      let chunk = readCompleteLines(file, rewritten ? 0 : at.offset);
      if (rewritten || chunk.shrunk) {
        // factory-obs only appends: a shorter file (or one masked at its run's close) was replaced. Start over.
        this.deleteHarness.run(stem);
        at = { offset: 0, count: 0 };
        chunk = readCompleteLines(file, 0);
      }
      let added = 0;
      chunk.lines.forEach((line, i) => {
        const masked = redactJsonLine(this.redact, line);
        const value = parseObjectLine(masked);
        if (!value) return; // torn or blank: its line number stays taken, so numbering never shifts
        const sessionId = typeof value.session_id === 'string' && value.session_id ? value.session_id : stem;
        const ts = typeof value.ts === 'string' ? value.ts : null;
        const type = typeof value.type === 'string' ? value.type : 'unknown';
        added += this.insertHarness.run(sessionId, at.count + i, ts, type, masked).changes;
      });
      this.putSource.run(source, chunk.next, at.count + chunk.lines.length);
      return added;
    });
    return tx.immediate();
  }

  /** New ledger lines into `sessions`; returns how many were added. */
  ingestLedger(): number {
    const source = 'ledger';
    const file = this.layout.ledgerFile;
    if (this.unchanged(source, file)) return 0;
    const tx = this.db.transaction((): number => {
      let at = this.state(source);
      let chunk = readCompleteLines(file, at.offset);
      if (chunk.shrunk) {
        this.deleteSessions.run();
        at = { offset: 0, count: 0 };
        chunk = readCompleteLines(file, 0);
      }
      let added = 0;
      chunk.lines.forEach((line, i) => {
        const v = parseObjectLine(line);
        if (!v || typeof v.session_id !== 'string' || typeof v.cwd !== 'string') return;
        // session_id stays as written: it joins the harness rows; an id is never a secret of ours.
        const text = (x: unknown) => (typeof x === 'string' ? this.redact(x) : null);
        added += this.insertSession.run(
          at.count + i,
          v.session_id,
          text(v.adw_id),
          text(v.phase),
          text(v.cwd),
          text(v.model),
          text(v.declared_at),
          text(v.reason),
        ).changes;
      });
      this.putSource.run(source, chunk.next, at.count + chunk.lines.length);
      return added;
    });
    return tx.immediate();
  }
}
