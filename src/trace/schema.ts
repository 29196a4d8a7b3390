// The trace store's schema, versioned with SQLite's `user_version`. Each migration runs in its own IMMEDIATE
// transaction together with the version bump, so a crash mid-migration leaves the previous version intact.
// The database is an index derived from raw files (run logs, factory-obs harness JSONL, the ledger): a column
// added later can always be back-filled by rebuilding from them.
import type Database from 'better-sqlite3';
import { EXIT } from '../contract/exit.js';

const V1 = `
CREATE TABLE runs (
  adw_id       TEXT PRIMARY KEY,
  adw_name     TEXT,
  cwd          TEXT,
  args_json    TEXT,
  started_at   TEXT,
  finished_at  TEXT,
  status       TEXT NOT NULL DEFAULT 'running'
               CHECK (status IN ('running', 'green', 'failed', 'interrupted', 'infrastructure')),
  exit_code    INTEGER,
  cost_usd     REAL NOT NULL DEFAULT 0,
  tokens       INTEGER NOT NULL DEFAULT 0,
  failed_phase TEXT,
  -- The cockpit process recording the run live: a 'running' run whose owner is gone was cut short (kill -9).
  owner_pid    INTEGER
);
CREATE INDEX runs_by_name_start ON runs (adw_name, started_at);
CREATE INDEX runs_by_start ON runs (started_at);

-- tokens/cost_usd = settled attempts + the live usage of the attempt in flight (so a run killed mid-attempt
-- still shows what it spent); phase_ok / phase_failed replace them with the runner's authoritative figures.
CREATE TABLE phases (
  adw_id         TEXT NOT NULL,
  seq            INTEGER NOT NULL,
  name           TEXT NOT NULL,
  kind           TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'pending',
  attempts       INTEGER NOT NULL DEFAULT 0,
  max_attempts   INTEGER NOT NULL DEFAULT 1,
  started_at     TEXT,
  seconds        REAL,
  tokens         INTEGER NOT NULL DEFAULT 0,
  cost_usd       REAL NOT NULL DEFAULT 0,
  settled_tokens INTEGER NOT NULL DEFAULT 0,
  settled_cost   REAL NOT NULL DEFAULT 0,
  session_id     TEXT,
  model          TEXT,
  motif          TEXT,
  result_json    TEXT,
  PRIMARY KEY (adw_id, name)
);
CREATE INDEX phases_by_seq ON phases (adw_id, seq);

-- payload = the whole RunEvent as JSON: replay parses it back.
CREATE TABLE events (
  adw_id  TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  ts      TEXT NOT NULL,
  type    TEXT NOT NULL,
  phase   TEXT,
  payload TEXT NOT NULL,
  PRIMARY KEY (adw_id, seq)
);

-- One row per ledger line (a session is declared again on every attempt, fallback or resume).
CREATE TABLE sessions (
  line_no     INTEGER PRIMARY KEY,
  session_id  TEXT NOT NULL,
  adw_id      TEXT,
  phase       TEXT,
  cwd         TEXT,
  model       TEXT,
  declared_at TEXT,
  reason      TEXT
);
CREATE INDEX sessions_by_id ON sessions (session_id);
CREATE INDEX sessions_by_run ON sessions (adw_id, phase);

CREATE TABLE harness_events (
  session_id TEXT NOT NULL,
  line_no    INTEGER NOT NULL,
  ts         TEXT,
  type       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  PRIMARY KEY (session_id, line_no)
);

-- How far each raw file has been read: bytes through the last complete line, and how many lines (or, for run
-- logs, events) that was. Updated in the same transaction as the rows it describes.
CREATE TABLE ingest_sources (
  source TEXT PRIMARY KEY,
  offset INTEGER NOT NULL,
  count  INTEGER NOT NULL
);

-- A session belongs to one (run, phase); DISTINCT keeps the repeated ledger lines from multiplying rows.
CREATE VIEW harness_by_phase AS
SELECT s.adw_id, s.phase, h.session_id, h.line_no, h.ts, h.type, h.payload
FROM harness_events h
JOIN (SELECT DISTINCT session_id, adw_id, phase FROM sessions WHERE adw_id IS NOT NULL) s
  ON s.session_id = h.session_id;
`;

// V2: the tool a harness line is about, as a column of the view, so tool calls per phase are one GROUP BY
// (SELECT phase, tool_name, count(*) FROM harness_by_phase WHERE type = 'tool_start' GROUP BY phase, tool_name).
const V2 = `
DROP VIEW harness_by_phase;
CREATE VIEW harness_by_phase AS
SELECT s.adw_id, s.phase, h.session_id, h.line_no, h.ts, h.type, json_extract(h.payload, '$.tool_name') AS tool_name, h.payload
FROM harness_events h
JOIN (SELECT DISTINCT session_id, adw_id, phase FROM sessions WHERE adw_id IS NOT NULL) s
  ON s.session_id = h.session_id;
`;

// V3: a run a spend cap stopped (exit 3) is `budget`, not `failed`. SQLite cannot change a CHECK in place: the runs
// table is rebuilt with its rows, and a stored exit 3 takes its status.
const V3 = `
CREATE TABLE runs_v3 (
  adw_id       TEXT PRIMARY KEY,
  adw_name     TEXT,
  cwd          TEXT,
  args_json    TEXT,
  started_at   TEXT,
  finished_at  TEXT,
  status       TEXT NOT NULL DEFAULT 'running'
               CHECK (status IN ('running', 'green', 'failed', 'interrupted', 'infrastructure', 'budget')),
  exit_code    INTEGER,
  cost_usd     REAL NOT NULL DEFAULT 0,
  tokens       INTEGER NOT NULL DEFAULT 0,
  failed_phase TEXT,
  owner_pid    INTEGER
);
INSERT INTO runs_v3 SELECT adw_id, adw_name, cwd, args_json, started_at, finished_at,
  CASE WHEN exit_code = ${EXIT.budget} AND status = 'failed' THEN 'budget' ELSE status END,
  exit_code, cost_usd, tokens, failed_phase, owner_pid FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
CREATE INDEX runs_by_name_start ON runs (adw_name, started_at);
CREATE INDEX runs_by_start ON runs (started_at);
`;

/** Migration k brings the database from user_version k to k + 1. Append only; never edit a shipped one. */
export const MIGRATIONS: readonly string[] = [V1, V2, V3];

export const SCHEMA_VERSION = MIGRATIONS.length;

export type MigrationOutcome = { from: number; to: number } | { from: number; to: number; newer: true };

/** Bring the schema to SCHEMA_VERSION. A database written by a newer factory is left as it is. */
export function migrate(db: Database.Database): MigrationOutcome {
  const from = db.pragma('user_version', { simple: true }) as number;
  if (from > SCHEMA_VERSION) return { from, to: from, newer: true };
  for (let v = from; v < SCHEMA_VERSION; v += 1) {
    const step = db.transaction(() => {
      // Re-read inside the write lock: another process may have migrated meanwhile.
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now !== v) return;
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    });
    step.immediate();
  }
  return { from, to: SCHEMA_VERSION };
}
