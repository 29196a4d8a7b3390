// Synthetic runs for the trace store's unit tests: event sequences shaped like the runner's, a temp workspace,
// factory-obs harness lines and ledger lines, and a second SQLite connection to look at factory.db from outside.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { RunEvent } from '../../src/contract/events.js';
import { appendLedger } from '../../src/trace/ledger.js';
import { workspacePaths, type WorkspacePaths } from '../../src/config/paths.js';
import { traceLayout } from '../../src/trace/runLog.js';

export interface TempWorkspace {
  paths: WorkspacePaths;
  cleanup(): void;
}

export function tempWorkspace(): TempWorkspace {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'factory-trace-'));
  return { paths: workspacePaths(root), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/**
 * A build-like run: check (code) → build (agent, a failed attempt then a green one in one session) → gates (code).
 * `exit` picks the ending; 'crash' stops in the middle of build's second attempt (no run_finished).
 */
export function buildRun(
  adwId: string,
  t0: number,
  ending: 'green' | 'failed' | 'interrupted' | 'crash' = 'green',
): RunEvent[] {
  const session = `sess-${adwId}`;
  let ts = t0;
  const at = () => (ts += 10);
  const e: RunEvent[] = [
    {
      type: 'run_started',
      adwId,
      ts: at(),
      adwName: 'adw_build',
      cwd: '/repo',
      args: { spec: 'specs/a.md' },
      phases: [
        { name: 'check', kind: 'code', attempts: 1 },
        { name: 'build', kind: 'agent', attempts: 3 },
        { name: 'gates', kind: 'code', attempts: 1 },
      ],
    },
    { type: 'phase_started', adwId, ts: at(), phase: 'check', kind: 'code' },
    { type: 'attempt_started', adwId, ts: at(), phase: 'check', attempt: 1, attempts: 1 },
    {
      type: 'phase_ok',
      adwId,
      ts: at(),
      phase: 'check',
      kind: 'code',
      attempt: 1,
      attempts: 1,
      seconds: 0.01,
      tokens: 0,
      cost: 0,
      result: { tree: 'clean' },
    },
    { type: 'phase_started', adwId, ts: at(), phase: 'build', kind: 'agent' },
    {
      type: 'attempt_started',
      adwId,
      ts: at(),
      phase: 'build',
      attempt: 1,
      attempts: 3,
      sessionId: session,
      model: 'scripted/alpha',
    },
    {
      type: 'activity',
      adwId,
      ts: at(),
      phase: 'build',
      activity: { kind: 'tool_start', tool: 'bash', detail: 'npm test' },
    },
    {
      type: 'activity',
      adwId,
      ts: at(),
      phase: 'build',
      activity: { kind: 'tool_end', tool: 'bash', isError: true, detail: '1 failing' },
    },
    { type: 'usage', adwId, ts: at(), phase: 'build', tokens: 1000, cost: 0.01 },
    {
      type: 'attempt_failed',
      adwId,
      ts: at(),
      phase: 'build',
      attempt: 1,
      attempts: 3,
      motif: 'npm test failed: 1 failing',
      willRetry: true,
    },
    {
      type: 'attempt_started',
      adwId,
      ts: at(),
      phase: 'build',
      attempt: 2,
      attempts: 3,
      sessionId: session,
      model: 'scripted/alpha',
    },
    { type: 'usage', adwId, ts: at(), phase: 'build', tokens: 400, cost: 0.004 },
  ];
  if (ending === 'crash') return e;
  if (ending === 'interrupted') {
    e.push(
      {
        type: 'attempt_failed',
        adwId,
        ts: at(),
        phase: 'build',
        attempt: 2,
        attempts: 3,
        motif: 'interrupted by the user',
        willRetry: false,
      },
      {
        type: 'phase_failed',
        adwId,
        ts: at(),
        phase: 'build',
        kind: 'agent',
        attempts: 3,
        motif: 'interrupted by the user',
        seconds: 2,
        tokens: 1400,
        cost: 0.014,
        sessionId: session,
      },
      {
        type: 'run_finished',
        adwId,
        ts: at(),
        exit: 130,
        seconds: 3,
        tokens: 1400,
        cost: 0.014,
        failedPhase: 'build',
        interrupted: true,
      },
    );
    return e;
  }
  e.push(
    { type: 'activity', adwId, ts: at(), phase: 'build', activity: { kind: 'text', text: 'fixed the test' } },
    { type: 'usage', adwId, ts: at(), phase: 'build', tokens: 600, cost: 0.006 },
    {
      type: 'phase_ok',
      adwId,
      ts: at(),
      phase: 'build',
      kind: 'agent',
      attempt: 2,
      attempts: 3,
      seconds: 2,
      tokens: 1600,
      cost: 0.016,
      sessionId: session,
      result: { status: 'success', changed_files: ['a.js'] },
    },
    { type: 'phase_started', adwId, ts: at(), phase: 'gates', kind: 'code' },
    { type: 'attempt_started', adwId, ts: at(), phase: 'gates', attempt: 1, attempts: 1 },
    {
      type: 'gate_result',
      adwId,
      ts: at(),
      phase: 'gates',
      gate: 'npm test',
      ok: ending === 'green',
      motif: ending === 'green' ? undefined : 'npm test: 2 failing',
      seconds: 0.5,
    },
  );
  if (ending === 'green') {
    e.push(
      {
        type: 'phase_ok',
        adwId,
        ts: at(),
        phase: 'gates',
        kind: 'code',
        attempt: 1,
        attempts: 1,
        seconds: 0.5,
        tokens: 0,
        cost: 0,
        result: [{ gate: 'npm test', ok: true }],
      },
      { type: 'run_finished', adwId, ts: at(), exit: 0, seconds: 3, tokens: 1600, cost: 0.016 },
    );
  } else {
    e.push(
      {
        type: 'attempt_failed',
        adwId,
        ts: at(),
        phase: 'gates',
        attempt: 1,
        attempts: 1,
        motif: 'npm test: 2 failing',
        willRetry: false,
      },
      {
        type: 'phase_failed',
        adwId,
        ts: at(),
        phase: 'gates',
        kind: 'code',
        attempts: 1,
        motif: 'npm test: 2 failing',
        seconds: 0.5,
        tokens: 0,
        cost: 0,
      },
      { type: 'run_finished', adwId, ts: at(), exit: 1, seconds: 3, tokens: 1600, cost: 0.016, failedPhase: 'gates' },
    );
  }
  return e;
}

/** One factory-obs line (the fields factory-obs writes). */
export function obsLine(
  sessionId: string,
  adwId: string,
  phase: string,
  type: string,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    ts: new Date(1_700_000_000_000).toISOString(),
    type,
    session_id: sessionId,
    phase,
    role: 'builder',
    adw_id: adwId,
    ...extra,
  });
}

export function harnessFile(paths: WorkspacePaths, sessionId: string): string {
  return path.join(traceLayout(paths).harnessDir, `${sessionId}.jsonl`);
}

export function appendHarness(paths: WorkspacePaths, sessionId: string, text: string): void {
  fs.mkdirSync(traceLayout(paths).harnessDir, { recursive: true });
  fs.appendFileSync(harnessFile(paths, sessionId), text);
}

export function declare(paths: WorkspacePaths, sessionId: string, adwId: string, phase: string, reason?: string): void {
  appendLedger(paths.ledgerFile, {
    session_id: sessionId,
    cwd: paths.root,
    model: 'scripted/alpha',
    phase,
    adw_id: adwId,
    declared_at: new Date(1_700_000_000_000).toISOString(),
    ...(reason ? { reason } : {}),
  });
}

/** A separate connection to factory.db, as another process (or the sqlite3 CLI) would have. */
export function outside(paths: WorkspacePaths): Database.Database {
  return new Database(traceLayout(paths).dbFile);
}

export function count(db: Database.Database, sql: string, ...params: unknown[]): number {
  return db
    .prepare(sql)
    .pluck()
    .get(...params) as number;
}

/** The SPEC 3.9 query, verbatim but for the ADW name. */
export const LATEST_RUN_PHASES = `SELECT name, status, tokens, cost_usd FROM phases WHERE adw_id = (SELECT adw_id FROM runs WHERE adw_name = ? ORDER BY started_at DESC LIMIT 1) ORDER BY seq;`;
