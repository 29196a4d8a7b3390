// `factory runs` and `factory show <adw_id>`: the trace store read back as plain text (or JSON). The runs list
// is re-synced from the raw traces first, so a run recorded by a killed cockpit is there too. What is ingested and
// what is printed go through the workspace's redactor: a raw file left by a killed cockpit (or an older factory)
// is masked on its way in, and a row written before the masking existed on its way out.
import { loadDotEnv, secretEntries } from '../config/env.js';
import { UsageError } from '../contract/errors.js';
import type { RunEvent } from '../contract/events.js';
import { formatCost, formatSeconds, formatTokens } from '../contract/format.js';
import type { WorkspacePaths } from '../config/paths.js';
import { harvestReport } from '../bon/harvest/rank.js';
import { pendingApply } from '../engine/resume.js';
import { createRedactor, redactDeep, type Redactor } from '../contract/redact.js';
import type { PhaseRow, RunRow, TraceStore } from '../trace/store.js';
import { printedCells, printTable } from '../contract/runsTable.js';

/** The redactor of a workspace read without a run (its `.env` and this process's credential variables). */
export function readerRedactor(paths: WorkspacePaths, real: NodeJS.ProcessEnv = process.env): Redactor {
  return createRedactor(secretEntries(real, loadDotEnv(paths.root, real)));
}

export async function openSyncedStore(
  paths: WorkspacePaths,
  redact: Redactor = readerRedactor(paths),
): Promise<TraceStore> {
  const { openTraceStore } = await import('../trace/store.js');
  const store = openTraceStore(paths, { onWarning: (m) => process.stderr.write(`factory: ${m}\n`), redact });
  store.syncAll();
  return store;
}

export function formatRuns(rows: RunRow[], now = Date.now()): string {
  if (rows.length === 0) return 'no runs yet — try `factory demo` or `factory prompt "…"`\n';
  return `${printTable(printedCells(rows, now))}\n`;
}

/** What a run did beyond its phases, as its events say: fallbacks, the proposal, applies (in order). */
export function outcomeLines(events: readonly RunEvent[]): string[] {
  const lines: string[] = [];
  for (const e of events) {
    if (e.type === 'fallback') lines.push(`${e.phase}: fell back from ${e.from} to ${e.to}: ${e.reason}`);
    // A best-of-N's harvest as the headless log said it: the ranking, the primer line, the winner and its command.
    else if (e.type === 'harvest') lines.push(...harvestReport(e));
    else if (e.type === 'proposal') lines.push(`proposed: ${e.command}`);
    else if (e.type === 'apply') lines.push(`${e.applied ? 'applied' : 'not applied'}: ${e.line}`);
  }
  // Asked for (--apply) and not done: the cockpit stopped between the harvest and the apply.
  if (pendingApply(events))
    lines.push(
      `apply asked (--apply) and not done: the run stopped before it — factory resume ${events[0]?.adwId ?? '<id>'} applies the winner`,
    );
  return lines;
}

/**
 * Each agent attempt in order, with what judged it under it: its own failure, and the gates that ran after it
 * (a red gate sends the build back, so each attempt has its own gate results). Code phases' attempts are left out.
 */
export function attemptLines(events: readonly RunEvent[]): string[] {
  // One block per agent attempt, in the order they started; arms of a best-of-N run at once, so each event goes to
  // its own phase's current attempt — a gate of a judging phase (build's `gates`) to the attempt it judges, the
  // latest started. A resumed run's lives are one history: attempts are numbered across them, and an attempt the
  // cockpit was stopped in (no end before the next life) is marked killed.
  const blocks: string[][] = [];
  const current = new Map<string, string[]>();
  const open = new Set<string[]>();
  const started = new Map<string, number>();
  let latest: string[] | undefined;
  let lives = 0;
  const agent = new Set<string>();
  const end = (phase: string) => {
    const block = current.get(phase);
    if (block) open.delete(block);
  };
  for (const e of events) {
    if (e.type === 'run_started') {
      lives += 1;
      for (const block of open) block.push('  ✗ killed: the cockpit stopped during it (resumed below)');
      open.clear();
      for (const p of e.phases) if (p.kind === 'agent') agent.add(p.name);
    } else if (e.type === 'phase_planned' && e.phase.kind === 'agent') agent.add(e.phase.name);
    else if (e.type === 'attempt_started' && agent.has(e.phase)) {
      const n = (started.get(e.phase) ?? 0) + 1;
      started.set(e.phase, n);
      // Within one life the runner's own count; across lives, this attempt's place in the whole history.
      const number =
        lives > 1 || n !== e.attempt
          ? `attempt ${n}${lives > 1 ? ` (life ${lives})` : ''}`
          : `attempt ${e.attempt}/${e.attempts}`;
      const block = [
        `${e.phase} ${number}${e.model ? ` on ${e.model}` : ''}${e.sessionId ? ` (session ${e.sessionId})` : ''}`,
      ];
      blocks.push(block);
      current.set(e.phase, block);
      open.add(block);
      latest = block;
    } else if (e.type === 'attempt_failed' && agent.has(e.phase)) {
      // A red gate's motif is the attempt's: said once, on the gate's line.
      const block = current.get(e.phase);
      if (block && !block.some((line) => line.endsWith(` — ${e.motif}`))) block.push(`  ✗ ${e.motif}`);
      end(e.phase);
    } else if ((e.type === 'phase_ok' || e.type === 'phase_failed') && agent.has(e.phase)) end(e.phase);
    else if (e.type === 'gate_result') {
      (current.get(e.phase) ?? latest)?.push(
        `  ${e.ok ? '✓' : '✗'} ${e.gate} (${e.seconds.toFixed(1)} s)${!e.ok && e.motif ? ` — ${e.motif}` : ''}`,
      );
    }
  }
  return blocks.flat();
}

export function formatShow(
  run: RunRow,
  phases: PhaseRow[],
  sessions: { sessionId: string; phase?: string; model?: string; reason?: string }[],
  outcomes: string[] = [],
  attempts: string[] = [],
): string {
  const lines = [
    `${run.adwId} · ${run.adwName} · ${run.status}${run.failedPhase ? ` at ${run.failedPhase}` : ''} · ${formatTokens(run.tokens)} tokens · ${formatCost(run.cost)}${run.cwd ? ` · ${run.cwd}` : ''}`,
    '',
  ];
  const rows = phases.map((p) => [
    p.name,
    p.kind,
    p.status,
    `${p.attempts}/${p.maxAttempts}`,
    p.seconds === undefined ? '' : formatSeconds(p.seconds),
    formatTokens(p.tokens),
    formatCost(p.cost),
    p.sessionId ?? '',
  ]);
  lines.push(printTable([['phase', 'kind', 'status', 'attempts', 'time', 'tokens', 'cost', 'session'], ...rows]));
  // A motif its attempt block below already says is not said twice.
  for (const p of phases)
    if (p.motif && !attempts.some((a) => a === `  ✗ ${p.motif}` || a.endsWith(` — ${p.motif}`)))
      lines.push(`  ${p.name}: ${p.motif}`);
  if (attempts.length > 0) lines.push('', 'attempts:', ...attempts.map((a) => `  ${a}`));
  if (sessions.length > 0) {
    // The ledger declares a session at every start (each attempt, a fallback): one line per session here.
    const seen = new Map<string, { sessionId: string; phase?: string; model?: string; reasons: string[] }>();
    for (const s of sessions) {
      const row = seen.get(s.sessionId) ?? { sessionId: s.sessionId, phase: s.phase, model: s.model, reasons: [] };
      if (s.model) row.model = s.model;
      if (s.reason && !row.reasons.includes(s.reason)) row.reasons.push(s.reason);
      seen.set(s.sessionId, row);
    }
    lines.push('', 'sessions (ledger):');
    for (const s of seen.values())
      lines.push(
        `  ${s.sessionId}  ${s.phase ?? '?'}  ${s.model ?? ''}${s.reasons.length > 0 ? `  (${s.reasons.join(', ')})` : ''}`,
      );
  }
  if (outcomes.length > 0) lines.push('', 'outcomes:', ...outcomes.map((o) => `  ${o}`));
  return `${lines.join('\n')}\n`;
}

export async function runsOutput(
  paths: WorkspacePaths,
  json: boolean,
  limit = 20,
  redact: Redactor = readerRedactor(paths),
): Promise<string> {
  const store = await openSyncedStore(paths, redact);
  try {
    const rows = redactDeep(redact, store.listRuns(limit));
    return json ? `${JSON.stringify(rows)}\n` : formatRuns(rows);
  } finally {
    store.close();
  }
}

export async function showOutput(
  paths: WorkspacePaths,
  adwId: string | undefined,
  json: boolean,
  redact: Redactor = readerRedactor(paths),
): Promise<string> {
  if (!adwId || !/^[0-9a-f]{8}$/.test(adwId))
    throw new UsageError(`factory show needs a run id of 8 hex characters (got ${JSON.stringify(adwId ?? '')})`);
  const store = await openSyncedStore(paths, redact);
  try {
    const found = store.listRuns(100_000).find((r) => r.adwId === adwId);
    if (!found) throw new UsageError(`no run ${adwId} in ${paths.dataDir}`);
    const run = redactDeep(redact, found);
    const phases = redactDeep(redact, store.phaseRows(adwId));
    const sessions = redactDeep(redact, store.sessionRows(adwId));
    const events = store.runEvents(adwId);
    const outcomes = redactDeep(redact, outcomeLines(events));
    const attempts = redactDeep(redact, attemptLines(events));
    return json
      ? `${JSON.stringify({ run, phases, sessions, outcomes, attempts })}\n`
      : formatShow(run, phases, sessions, outcomes, attempts);
  } finally {
    store.close();
  }
}
