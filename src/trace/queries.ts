// Read side of the trace store: the rows `factory runs`, `factory show`, `factory resume` and the TUI runs list
// need. Plain objects out, never a database handle, so callers stay free of SQLite.
import type Database from 'better-sqlite3';
import type { RunEvent } from '../contract/events.js';
import type { RunStatus } from './fold.js';
import { processAlive } from '../process/alive.js';

/** One line of the runs list; structurally the RunRow the TUI home (state/controller.ts) expects, plus extras. */
export interface RunRow {
  adwId: string;
  /** adw_prompt, adw_build, adw_bon ('' for a run whose run_started was never recorded). */
  adwName: string;
  status: RunStatus;
  /** Phases ok over phases planned, e.g. "3/3". */
  phases: string;
  phasesOk: number;
  phasesTotal: number;
  tokens: number;
  cost: number;
  /** Milliseconds since the epoch. */
  startedAt: number;
  finishedAt?: number;
  exitCode?: number;
  failedPhase?: string;
  cwd?: string;
  /**
   * The run never finished and the cockpit that recorded it live is gone (killed): its status then reads
   * 'interrupted', so `factory resume` and the runs list treat it as cut short.
   */
  abandoned?: boolean;
  /** The pid of the cockpit recording the run live, while it is alive (a run another cockpit still drives). */
  livePid?: number;
}

export interface PhaseRow {
  seq: number;
  name: string;
  kind: string;
  /** pending, running, retrying, ok, failed. */
  status: string;
  /** Attempts spent. */
  attempts: number;
  maxAttempts: number;
  seconds?: number;
  tokens: number;
  cost: number;
  sessionId?: string;
  model?: string;
  /** The motif of the last failed attempt, or of the phase when it failed for good. */
  motif?: string;
  /** What the phase handed on (envelope, gate report), parsed. */
  result?: unknown;
}

/** One ledger line of the run: a pi start declared for one of its phases. */
export interface SessionRow {
  sessionId: string;
  phase?: string;
  cwd?: string;
  model?: string;
  declaredAt?: string;
  /** Why this line exists beyond the first attempt (fallback, clone…). */
  reason?: string;
}

export interface HarnessRow {
  phase: string;
  sessionId: string;
  lineNo: number;
  ts?: string;
  type: string;
  /** The factory-obs line, parsed. */
  record: Record<string, unknown>;
}

/** SQL NULL → undefined, so rows read like the events they come from. */
function opt<T>(value: T | null): T | undefined {
  return value === null ? undefined : value;
}

/** Whether a process still exists (EPERM: it does, under another user). */
function epochMs(iso: string | null): number | undefined {
  if (iso === null) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

export class TraceQueries {
  private readonly runs;
  private readonly events;
  private readonly phases;
  private readonly sessions;
  private readonly harness;
  private readonly harnessOfPhase;

  constructor(db: Database.Database) {
    this.runs = db.prepare(`
      SELECT r.adw_id, r.adw_name, r.status, r.tokens, r.cost_usd, r.started_at, r.finished_at, r.exit_code,
        r.failed_phase, r.cwd, r.owner_pid,
        (SELECT name FROM phases p WHERE p.adw_id = r.adw_id AND p.status IN ('running', 'retrying') ORDER BY seq LIMIT 1) AS live_phase,
        -- A green run's red phases were optional (a best-of-N arm): they ran to their end, so they count as done.
        (SELECT count(*) FROM phases p WHERE p.adw_id = r.adw_id AND (p.status = 'ok' OR (r.status = 'green' AND p.status = 'failed'))) AS ok,
        (SELECT count(*) FROM phases p WHERE p.adw_id = r.adw_id) AS total
      FROM runs r ORDER BY r.started_at DESC, r.adw_id LIMIT ?`);
    this.events = db.prepare('SELECT payload FROM events WHERE adw_id = ? ORDER BY seq').pluck();
    this.phases = db.prepare(`
      SELECT seq, name, kind, status, attempts, max_attempts, seconds, tokens, cost_usd, session_id, model, motif, result_json
      FROM phases WHERE adw_id = ? ORDER BY seq`);
    this.sessions = db.prepare(`
      SELECT session_id, phase, cwd, model, declared_at, reason FROM sessions WHERE adw_id = ? ORDER BY line_no`);
    this.harness = db.prepare(
      'SELECT phase, session_id, line_no, ts, type, payload FROM harness_by_phase WHERE adw_id = ? ORDER BY session_id, line_no',
    );
    this.harnessOfPhase = db.prepare(`
      SELECT phase, session_id, line_no, ts, type, payload FROM harness_by_phase WHERE adw_id = ? AND phase = ? ORDER BY session_id, line_no`);
  }

  listRuns(limit: number): RunRow[] {
    type Raw = {
      adw_id: string;
      adw_name: string | null;
      status: RunStatus;
      tokens: number;
      cost_usd: number;
      started_at: string | null;
      finished_at: string | null;
      exit_code: number | null;
      failed_phase: string | null;
      cwd: string | null;
      owner_pid: number | null;
      live_phase: string | null;
      ok: number;
      total: number;
    };
    return (this.runs.all(limit) as Raw[]).map((r) => {
      const abandoned = r.status === 'running' && r.owner_pid !== null && !processAlive(r.owner_pid);
      const row: RunRow = {
        adwId: r.adw_id,
        adwName: r.adw_name ?? '',
        status: abandoned ? 'interrupted' : r.status,
        phases: `${r.ok}/${r.total}`,
        phasesOk: r.ok,
        phasesTotal: r.total,
        tokens: r.tokens,
        cost: r.cost_usd,
        startedAt: epochMs(r.started_at) ?? 0,
        finishedAt: epochMs(r.finished_at),
        exitCode: opt(r.exit_code),
        // A run cut short failed in the phase it was running.
        failedPhase: opt(r.failed_phase) ?? (abandoned ? opt(r.live_phase) : undefined),
        cwd: opt(r.cwd),
      };
      if (abandoned) row.abandoned = true;
      if (r.status === 'running' && r.owner_pid !== null && r.owner_pid !== process.pid && processAlive(r.owner_pid))
        row.livePid = r.owner_pid;
      return row;
    });
  }

  runEvents(adwId: string): RunEvent[] {
    return (this.events.all(adwId) as string[]).map((p) => JSON.parse(p) as RunEvent);
  }

  phaseRows(adwId: string): PhaseRow[] {
    type Raw = {
      seq: number;
      name: string;
      kind: string;
      status: string;
      attempts: number;
      max_attempts: number;
      seconds: number | null;
      tokens: number;
      cost_usd: number;
      session_id: string | null;
      model: string | null;
      motif: string | null;
      result_json: string | null;
    };
    return (this.phases.all(adwId) as Raw[]).map((r) => ({
      seq: r.seq,
      name: r.name,
      kind: r.kind,
      status: r.status,
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      seconds: opt(r.seconds),
      tokens: r.tokens,
      cost: r.cost_usd,
      sessionId: opt(r.session_id),
      model: opt(r.model),
      motif: opt(r.motif),
      result: r.result_json === null ? undefined : (JSON.parse(r.result_json) as unknown),
    }));
  }

  sessionRows(adwId: string): SessionRow[] {
    type Raw = {
      session_id: string;
      phase: string | null;
      cwd: string | null;
      model: string | null;
      declared_at: string | null;
      reason: string | null;
    };
    return (this.sessions.all(adwId) as Raw[]).map((r) => ({
      sessionId: r.session_id,
      phase: opt(r.phase),
      cwd: opt(r.cwd),
      model: opt(r.model),
      declaredAt: opt(r.declared_at),
      reason: opt(r.reason),
    }));
  }

  harnessRows(adwId: string, phase?: string): HarnessRow[] {
    type Raw = { phase: string; session_id: string; line_no: number; ts: string | null; type: string; payload: string };
    const rows = (phase === undefined ? this.harness.all(adwId) : this.harnessOfPhase.all(adwId, phase)) as Raw[];
    return rows.map((r) => ({
      phase: r.phase,
      sessionId: r.session_id,
      lineNo: r.line_no,
      ts: opt(r.ts),
      type: r.type,
      record: JSON.parse(r.payload) as Record<string, unknown>,
    }));
  }
}
