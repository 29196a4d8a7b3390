// Folding RunEvents into the `events`, `runs` and `phases` tables. One function for the live path (the composition
// root's recordEvent) and for ingestion from run logs, so both build exactly the same rows. An event is folded only
// when its (adw_id, seq) row is new: applying the same event twice changes nothing.
import type Database from 'better-sqlite3';
import type { RunEvent } from '../contract/events.js';
import { exitKindOf } from '../contract/exit.js';

export type RunStatus = 'running' | 'green' | 'failed' | 'interrupted' | 'infrastructure' | 'budget';

export function runStatus(exit: number, interrupted?: boolean): RunStatus {
  // Budget: a spend cap stopped it (or a forecast above a cap was not confirmed): out of money, not broken.
  return interrupted ? 'interrupted' : exitKindOf(exit);
}

export function isoTime(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : new Date(0).toISOString();
}

/** Prepared statements over one connection; build once per connection. */
export class EventFolder {
  private readonly insertEvent;
  private readonly eventPayload;
  private readonly eventCount;
  private readonly ensureRun;
  private readonly runStarted;
  private readonly planPhase;
  private readonly ensurePhase;
  private readonly seqBefore;
  private readonly shiftPhases;
  private readonly phaseModel;
  private readonly phaseStarted;
  private readonly attemptStarted;
  private readonly usage;
  private readonly attemptFailed;
  private readonly phaseOk;
  private readonly phaseFailed;
  private readonly runFigures;
  private readonly runFinished;
  private readonly claimRun;
  private readonly deleteEvents;
  private readonly deletePhases;
  private readonly deleteRunRow;

  constructor(db: Database.Database) {
    this.insertEvent = db.prepare(
      'INSERT OR IGNORE INTO events (adw_id, seq, ts, type, phase, payload) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.eventPayload = db.prepare('SELECT payload FROM events WHERE adw_id = ? AND seq = ?').pluck();
    this.eventCount = db.prepare('SELECT coalesce(max(seq) + 1, 0) FROM events WHERE adw_id = ?').pluck();
    this.ensureRun = db.prepare("INSERT OR IGNORE INTO runs (adw_id, started_at, status) VALUES (?, ?, 'running')");
    this.runStarted = db.prepare(`
      INSERT INTO runs (adw_id, adw_name, cwd, args_json, started_at, status) VALUES (?, ?, ?, ?, ?, 'running')
      ON CONFLICT (adw_id) DO UPDATE SET adw_name = excluded.adw_name, cwd = excluded.cwd, args_json = excluded.args_json,
        started_at = min(coalesce(runs.started_at, excluded.started_at), excluded.started_at),
        status = 'running', finished_at = NULL, exit_code = NULL, failed_phase = NULL`);
    this.planPhase = db.prepare(`
      INSERT INTO phases (adw_id, seq, name, kind, max_attempts) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (adw_id, name) DO UPDATE SET seq = excluded.seq, kind = excluded.kind, max_attempts = excluded.max_attempts`);
    // The seq a planned phase takes: its `before` phase's (moved down by shiftPhases), else the end.
    this.seqBefore = db
      .prepare(
        `SELECT coalesce((SELECT seq - 1 FROM phases WHERE adw_id = ? AND name = ?), (SELECT coalesce(max(seq) + 1, 0) FROM phases WHERE adw_id = ?))`,
      )
      .pluck();
    this.phaseModel = db.prepare('UPDATE phases SET model = ? WHERE adw_id = ? AND name = ?');
    this.shiftPhases = db.prepare(
      `UPDATE phases SET seq = seq + 1 WHERE adw_id = ? AND seq >= (SELECT seq FROM phases WHERE adw_id = ? AND name = ?)`,
    );
    this.ensurePhase = db.prepare(`
      INSERT OR IGNORE INTO phases (adw_id, seq, name, kind)
      VALUES (?, (SELECT coalesce(max(seq) + 1, 0) FROM phases WHERE adw_id = ?), ?, ?)`);
    this.phaseStarted = db.prepare(`
      UPDATE phases SET status = 'running', kind = ?, started_at = coalesce(started_at, ?) WHERE adw_id = ? AND name = ?`);
    // A new attempt settles what the previous one spent (its last live usage, or the runner's figures).
    this.attemptStarted = db.prepare(`
      UPDATE phases SET status = 'running', attempts = max(attempts, ?), max_attempts = max(max_attempts, ?),
        settled_tokens = tokens, settled_cost = cost_usd,
        session_id = coalesce(?, session_id), model = coalesce(?, model)
      WHERE adw_id = ? AND name = ?`);
    this.usage = db.prepare(
      'UPDATE phases SET tokens = settled_tokens + ?, cost_usd = settled_cost + ? WHERE adw_id = ? AND name = ?',
    );
    this.attemptFailed = db.prepare(`
      UPDATE phases SET motif = ?, status = CASE WHEN ? THEN 'retrying' ELSE status END WHERE adw_id = ? AND name = ?`);
    this.phaseOk = db.prepare(`
      UPDATE phases SET status = 'ok', kind = ?, attempts = max(attempts, ?), seconds = ?, tokens = ?, cost_usd = ?,
        settled_tokens = ?, settled_cost = ?, session_id = coalesce(?, session_id), result_json = ?
      WHERE adw_id = ? AND name = ?`);
    this.phaseFailed = db.prepare(`
      UPDATE phases SET status = 'failed', kind = ?, motif = ?, seconds = ?, tokens = ?, cost_usd = ?,
        settled_tokens = ?, settled_cost = ?, session_id = coalesce(?, session_id)
      WHERE adw_id = ? AND name = ?`);
    this.runFigures = db.prepare(`
      UPDATE runs SET tokens = (SELECT coalesce(sum(tokens), 0) FROM phases WHERE adw_id = @id),
        cost_usd = (SELECT coalesce(sum(cost_usd), 0) FROM phases WHERE adw_id = @id)
      WHERE adw_id = @id AND finished_at IS NULL`);
    this.runFinished = db.prepare(`
      UPDATE runs SET finished_at = ?, exit_code = ?, status = ?, tokens = ?, cost_usd = ?, failed_phase = ? WHERE adw_id = ?`);
    this.claimRun = db.prepare('UPDATE runs SET owner_pid = ? WHERE adw_id = ? AND finished_at IS NULL');
    this.deleteEvents = db.prepare('DELETE FROM events WHERE adw_id = ?');
    this.deletePhases = db.prepare('DELETE FROM phases WHERE adw_id = ?');
    this.deleteRunRow = db.prepare('DELETE FROM runs WHERE adw_id = ?');
  }

  /** The next free seq of a run (events are numbered 0, 1, 2… in the order the run emitted them). */
  nextSeq(adwId: string): number {
    return this.eventCount.get(adwId) as number;
  }

  /** The stored JSON of event `seq`, if any. */
  storedPayload(adwId: string, seq: number): string | undefined {
    return this.eventPayload.get(adwId, seq) as string | undefined;
  }

  /** Store and fold one event; false when (adw_id, seq) was already there (nothing changed). Call in a transaction. */
  apply(seq: number, event: RunEvent, payload = JSON.stringify(event)): boolean {
    const ts = isoTime(event.ts);
    // phase_planned carries the whole plan of the phase (an arm added live): its name is the phase column.
    const phase =
      'phase' in event && event.phase !== undefined
        ? typeof event.phase === 'string'
          ? event.phase
          : event.phase.name
        : null;
    if (this.insertEvent.run(event.adwId, seq, ts, event.type, phase, payload).changes === 0) return false;
    this.fold(event, ts);
    return true;
  }

  /** Mark an unfinished run as recorded live by process `pid` (see RunRow.abandoned). */
  claim(adwId: string, pid: number): void {
    this.claimRun.run(pid, adwId);
  }

  /** Forget every row of a run (before rebuilding it from its run log). */
  deleteRun(adwId: string): void {
    this.deleteEvents.run(adwId);
    this.deletePhases.run(adwId);
    this.deleteRunRow.run(adwId);
  }

  private fold(e: RunEvent, ts: string): void {
    const id = e.adwId;
    if (e.type === 'run_started') {
      this.runStarted.run(id, e.adwName, e.cwd, e.args === undefined ? null : JSON.stringify(e.args), ts);
      e.phases.forEach((p, i) => this.planPhase.run(id, i, p.name, p.kind, p.attempts));
      return;
    }
    this.ensureRun.run(id, ts);
    switch (e.type) {
      case 'phase_planned':
        // An arm added live takes its place before the phase it was planned before (the harvest): later phases
        // move one seq down, so the phase list reads in the order the run runs them.
        this.shiftPhases.run(id, id, e.before ?? null);
        this.planPhase.run(
          id,
          this.seqBefore.get(id, e.before ?? null, id) as number,
          e.phase.name,
          e.phase.kind,
          e.phase.attempts,
        );
        return;
      case 'phase_started':
        this.ensurePhase.run(id, id, e.phase, e.kind);
        this.phaseStarted.run(e.kind, ts, id, e.phase);
        return;
      case 'attempt_started':
        this.ensurePhase.run(id, id, e.phase, 'agent');
        this.attemptStarted.run(e.attempt, e.attempts, e.sessionId ?? null, e.model ?? null, id, e.phase);
        return;
      case 'fallback':
        // The relaunch runs on the fallback: the phase's model is the one that finishes, not the one that failed.
        this.phaseModel.run(e.to, id, e.phase);
        return;
      case 'usage':
        this.usage.run(e.tokens, e.cost, id, e.phase);
        this.runFigures.run({ id });
        return;
      case 'attempt_failed':
        this.attemptFailed.run(e.motif, e.willRetry ? 1 : 0, id, e.phase);
        return;
      case 'phase_ok':
        this.ensurePhase.run(id, id, e.phase, e.kind);
        this.phaseOk.run(
          e.kind,
          e.attempt,
          e.seconds,
          e.tokens,
          e.cost,
          e.tokens,
          e.cost,
          e.sessionId ?? null,
          e.result === undefined ? null : JSON.stringify(e.result),
          id,
          e.phase,
        );
        this.runFigures.run({ id });
        return;
      case 'phase_failed':
        this.ensurePhase.run(id, id, e.phase, e.kind);
        this.phaseFailed.run(
          e.kind,
          e.motif,
          e.seconds,
          e.tokens,
          e.cost,
          e.tokens,
          e.cost,
          e.sessionId ?? null,
          id,
          e.phase,
        );
        this.runFigures.run({ id });
        return;
      case 'run_finished':
        this.runFinished.run(ts, e.exit, runStatus(e.exit, e.interrupted), e.tokens, e.cost, e.failedPhase ?? null, id);
        return;
      default:
        // activity, gate_result: kept in `events` only.
        return;
    }
  }
}
