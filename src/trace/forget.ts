// A run dropped from the trace index (`factory clean`), once its raw files are gone: the index is rebuilt from those
// files, so the rows of a run whose files were removed must go too, or `factory runs` would list a run that no longer
// has anything behind it.
import type BetterSqlite3 from 'better-sqlite3';
import { harnessFileName, runLogName } from './runLog.js';

/** In one IMMEDIATE transaction: the run's rows, its sessions' ledger rows and harness lines, and how far their files were read. */
export function forgetRunRows(db: BetterSqlite3.Database, adwId: string, sessionIds: readonly string[]): boolean {
  const drop = db.transaction(() => {
    for (const table of ['runs', 'phases', 'events', 'sessions'])
      db.prepare(`DELETE FROM ${table} WHERE adw_id = ?`).run(adwId);
    const source = db.prepare('DELETE FROM ingest_sources WHERE source = ?');
    source.run(`runs/${runLogName(adwId)}`);
    const harness = db.prepare('DELETE FROM harness_events WHERE session_id = ?');
    for (const id of sessionIds) {
      harness.run(id);
      source.run(`harness/${harnessFileName(id)}`);
    }
  });
  drop.immediate();
  return true;
}
